"""Background tasks: commands that run on while the loop goes on (dev servers, long test runs).

`run_command` with `background: true` starts one and returns at once; `task_output` reads what
it printed since the last read; `task_stop` ends it; the end of the session stops them all.
Each task is its own process group (started by tools/processes.py, like run_command's), so
stopping it stops its children too; each also carries a token in its environment, so what left
the group (`setsid`, a double fork) is found and stopped with it, and a task holds its place
under MAX_RUNNING_TASKS while any of its processes lives, not only its shell. One reader thread
per task drains both pipes to the end, so a chatty task never blocks on a full pipe; the capture
keeps the first TASK_CAPTURE_BYTES of each stream and counts what it dropped. A finished task's
capture is let go once read, and beyond the newest KEPT_FINISHED finished tasks.
"""

from __future__ import annotations

import os
import secrets
import selectors
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from nanohermes.errors import ToolError
from nanohermes.sandbox.policy import Policy
from nanohermes.signals import held
from nanohermes.tools.processes import (
    KILL_GRACE,
    POLL_SECONDS,
    READ_CHUNK,
    SHELL,
    group_alive,
    marked_pids,
    release,
    signal_group,
    signal_marked,
    start_child,
)

TASK_CAPTURE_BYTES = 524_288  # per stream, 512 KB: enough for a server's start-up lines, which say whether it came up
MAX_RUNNING_TASKS = 8  # a session is not a process manager; each task may hold 1 MB of capture
KEPT_FINISHED = 8  # finished tasks whose unread output is kept; older ones' captures are let go
# Once the shell exited, how long a wait gives the reader to drain what it printed: EOF comes at once unless a
# process it left (`server &`) holds the pipes, which is then not waited for longer than this.
DRAIN_GRACE_S = 2.0
ID_PREFIX = "bg"  # bg1, bg2, …: not to be confused with a helper agent's `task`

RUNNING, EXITED, STOPPED, TIMED_OUT = "running", "exited", "stopped", "timed out"


@dataclass
class StreamCapture:
    """The first TASK_CAPTURE_BYTES of a stream, how many bytes it had in all, and how far
    task_output has read."""

    limit: int = TASK_CAPTURE_BYTES
    data: bytearray = field(default_factory=bytearray)
    total: int = 0
    kept: int = 0  # bytes ever kept in `data` (it is emptied when let go)
    read: int = 0  # offset into `data` of the first byte not yet returned
    lost: int = 0  # bytes never read when the capture was let go

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit - self.kept
        if room > 0:
            self.data += chunk[:room]
            self.kept += len(chunk[:room])

    def let_go(self) -> None:
        """Free the bytes of a finished task's capture; what was not read yet is counted."""
        self.lost += len(self.data) - self.read
        self.data, self.read = bytearray(), 0

    @property
    def dropped(self) -> int:
        return self.total - self.kept

    def unread(self) -> bytes:
        return bytes(self.data[self.read :])


class Task:
    """One background command: its process group, its captures, and how it ended."""

    def __init__(self, task_id: str, command: str, cwd: Path, timeout: float | None, sandbox: Policy | None = None):
        self.id, self.command, self.timeout = task_id, command, timeout
        self.stdout, self.stderr = StreamCapture(), StreamCapture()
        self.started = time.monotonic()
        self.ended: float | None = None
        self.ended_by: str | None = None  # STOPPED or TIMED_OUT when we ended it
        self.lock = threading.Lock()  # the reader writes the captures while task_output reads them
        self.done = threading.Event()  # set once the pipes are drained and the process reaped
        self.mark = secrets.token_hex(8)  # in the environment of all it starts (processes.marked_pids)
        self.proc = start_child([*SHELL, command], cwd, sandbox, mark=self.mark)
        self.sandbox, self.cwd = sandbox, cwd  # what confines it: its blocks are said with its output
        proxy = getattr(self.proc.launch, "proxy", None)
        self.refused_hosts: list[str] = proxy.refused if proxy is not None else []  # the proxy's own list
        self.hosts_said = 0  # how many of them a read has reported
        self._reader = threading.Thread(target=self._drain, name=f"nanohermes-{task_id}", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def state(self) -> str:
        if self.ended_by:
            return self.ended_by
        return RUNNING if self.proc.poll() is None else EXITED

    @property
    def exit_code(self) -> int | None:
        return self.proc.poll()

    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def wait(self, seconds: float) -> None:
        """Until its command has ended or `seconds` passed: a process it left holding the pipes
        (`server &`) is not waited for once the shell exited."""
        deadline = time.monotonic() + max(seconds, 0)
        while not self.done.wait(min(POLL_SECONDS, max(deadline - time.monotonic(), 0))):
            if self.proc.poll() is not None:  # what it printed before it exited may still be in the pipes
                self.done.wait(DRAIN_GRACE_S)  # the reader takes it, unless a process it left holds them
                return
            if time.monotonic() >= deadline:
                return

    def alive(self) -> bool:
        """Any of its processes still runs: the shell, its group, or one that left the group."""
        if not self.done.is_set() or self.proc.poll() is None:
            return True
        return group_alive(self.proc.pid) or bool(marked_pids(self.mark))

    def stop(self, reason: str = STOPPED) -> bool:
        """TERM the whole group, KILL what is left after KILL_GRACE. False if it had ended."""
        if not self.terminate(reason):
            return False
        self.finish_stopping(time.monotonic() + KILL_GRACE)
        return True

    def terminate(self, reason: str = STOPPED) -> bool:
        """Send TERM to the group; False if the task had ended (nothing was sent)."""
        if not self.alive():
            return False  # nothing of it runs: its group is gone (and its id may be reused)
        with self.lock:
            self.ended_by = self.ended_by or reason
        signal_group(self.proc.pid, signal.SIGTERM)
        signal_marked(self.mark, signal.SIGTERM)
        return True

    def finish_stopping(self, deadline: float) -> None:
        """After terminate(): KILL the group if it is not done by `deadline` (monotonic)."""
        if not self.done.wait(max(deadline - time.monotonic(), 0)):
            signal_group(self.proc.pid, signal.SIGKILL)  # something ignores TERM, or holds the pipes
            self.done.wait(KILL_GRACE)
        signal_marked(self.mark, signal.SIGKILL)  # what left the group (setsid) ends with it

    def _drain(self) -> None:
        """The reader thread: both pipes to EOF, the deadline if one was set, then reap."""
        captures = {self.proc.stdout.fileno(): self.stdout, self.proc.stderr.fileno(): self.stderr}
        deadline = self.started + self.timeout if self.timeout else None
        try:
            with selectors.DefaultSelector() as selector:
                for pipe in (self.proc.stdout, self.proc.stderr):
                    selector.register(pipe, selectors.EVENT_READ)
                while selector.get_map():
                    if deadline is not None and time.monotonic() >= deadline:
                        deadline = None
                        threading.Thread(target=self.stop, args=(TIMED_OUT,), daemon=True).start()
                    for key, _ in selector.select(timeout=POLL_SECONDS):
                        chunk = os.read(key.fd, READ_CHUNK)
                        if not chunk:
                            selector.unregister(key.fileobj)
                            continue
                        with self.lock:
                            captures[key.fd].add(chunk)
            self.proc.wait()
        finally:
            self.proc.stdout.close()
            self.proc.stderr.close()
            release(self.proc)
            self.ended = time.monotonic()
            self.done.set()


class BackgroundTasks:
    """The session's background tasks, by id. stop_all() when the session ends."""

    def __init__(self) -> None:
        self._tasks: dict[str, Task] = {}
        self._numbers = 0

    def start(self, command: str, cwd: Path, timeout: float | None = None, sandbox: Policy | None = None) -> Task:
        running = [t.id for t in self._tasks.values() if t.alive()]  # a task whose shell left `x &` running counts
        if len(running) >= MAX_RUNNING_TASKS:
            raise ToolError(
                f"{len(running)} background tasks still have processes running ({', '.join(running)}); "
                "stop one with task_stop first"
            )
        finished = [t for t in self._tasks.values() if t.done.is_set() and t.id not in running]
        for old in finished[:-KEPT_FINISHED]:  # a session of many short tasks must not keep every capture
            with old.lock:
                old.stdout.let_go()
                old.stderr.let_go()
        self._numbers += 1
        with held():  # a Ctrl-C before the task is on the list would leave its process unowned
            task = Task(f"{ID_PREFIX}{self._numbers}", command, cwd, timeout, sandbox)
            self._tasks[task.id] = task
        return task

    def get(self, task_id: str) -> Task:
        task = self._tasks.get(str(task_id).strip())
        if task is None:
            known = ", ".join(self._tasks) or "none were started in this session"
            raise ToolError(f"no background task {task_id!r} (tasks: {known})")
        return task

    def all(self) -> list[Task]:
        return list(self._tasks.values())

    def stop_all(self) -> list[Task]:
        """Stop every task still running (or still holding its pipes); returns those stopped.
        All get TERM first, so leaving waits one grace period, not one per task."""
        stopped = [task for task in self.all() if task.terminate()]
        deadline = time.monotonic() + KILL_GRACE
        for task in stopped:
            task.finish_stopping(deadline)
        return stopped
