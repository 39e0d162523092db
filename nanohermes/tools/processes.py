"""Child processes of commands: the one place a command's argv becomes a process, and its group.

run_command (tools/shell.py), background tasks (tools/background.py) and hooks (hooks/run.py)
start every command here, with `start_child`: in its own process group (so ending it ends what
it started), without the provider's key in its environment, its stdin from /dev/null (a hook's:
a pipe) and both pipes to read, started under `signals.held()` so a Ctrl-C or SIGTERM landing
inside Popen cannot leave the child running and owned by no one. A command runs confined when a sandbox policy is given
(sandbox/launch.py wraps its argv: bubblewrap, Landlock or Seatbelt), here and nowhere else;
what the confinement set up is released with the child (`end_child`, `release`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from nanohermes.errors import SandboxUnavailable, ToolError
from nanohermes.sandbox.launch import confine, unconfined
from nanohermes.sandbox.policy import Policy
from nanohermes.signals import held

SHELL = ("bash", "-c")  # a command is one string, run by bash (its pipes, redirections, `&`)
SECRET_ENV = frozenset({"OPENAI_API_KEY"})
KILL_GRACE = 1.0  # seconds between SIGTERM and SIGKILL: time to flush and exit cleanly
POLL_SECONDS = 0.1  # how often a reader notices an exit or a deadline while the pipes stay quiet
READ_CHUNK = 65_536  # one pipe buffer on Linux
GROUP_POLL_S = 0.02  # how often a group told to end is checked for stragglers
MARK_VAR = "NANOHERMES_TASK"  # a background task's token, inherited by all it starts (no cgroup, no root)


def child_env() -> dict[str, str]:
    """The user's environment minus the model provider's key: `env` or `echo $OPENAI_API_KEY`
    would otherwise put the key into the context and the session file."""
    return {k: v for k, v in os.environ.items() if k not in SECRET_ENV}


def start_child(
    argv: list[str],
    cwd: Path | str,
    sandbox: Policy | None = None,
    mark: str | None = None,
    stdin: bool = False,
    env: dict[str, str] | None = None,
) -> subprocess.Popen:
    """Start argv in cwd as the leader of a new process group, stdout and stderr piped, inside
    `sandbox` (None: unconfined). A signal that came while Popen ran is delivered as it returns;
    the child is ended before it goes on up. ToolError when the sandbox cannot be enforced here:
    the command is not run (fail closed). `mark`: set as MARK_VAR in its environment, which
    every descendant inherits, also one that left the group (`setsid`): marked_pids finds them.
    `stdin`: a pipe to write to (a hook's JSON, hooks/run.py), else /dev/null; `env`: added to
    its environment."""
    try:
        launch = confine(argv, sandbox, cwd) if sandbox is not None else unconfined(argv)
    except SandboxUnavailable as exc:
        raise ToolError(str(exc)) from None
    proc = None
    try:
        with held():  # a Ctrl-C while Popen runs would leave the started child unowned, and running
            proc = subprocess.Popen(
                launch.argv,
                cwd=cwd,
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group, so a timeout or a stop ends all of it
                env=launch.environ({**child_env(), **({MARK_VAR: mark} if mark else {}), **(env or {})}),
                pass_fds=launch.pass_fds,  # the sandbox's filter, read by bwrap as it starts
            )
        proc.launch = launch  # what the sandbox set up, released once the group has ended
    except BaseException:
        if proc is None:  # Popen itself failed, and its error goes on up
            launch.release()
        else:
            end_child(proc)
        raise
    return proc


def end_child(proc: subprocess.Popen) -> None:
    """Close the child's pipes and leave nothing of it running: the leader is killed if it still
    runs (interrupted by Ctrl-C or SIGTERM, or a bug), then what it left in its group ends."""
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
    if proc.poll() is None:
        signal_group(proc.pid, signal.SIGKILL)
        proc.wait()
    end_group(proc.pid)
    release(proc)


def release(proc: subprocess.Popen) -> None:
    """What the sandbox set up for a child whose group has ended (placeholders for missing
    protected paths). Once; a child not started here has nothing to release."""
    launch = getattr(proc, "launch", None)
    if launch is not None:
        proc.launch = None
        launch.release()


def signal_group(pgid: int, sig: int) -> None:
    """Signal every process of the group (a child of start_child: its pid is the group's id)."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):  # gone, or a member changed user (setuid)
        pass


def end_group(pgid: int) -> None:
    """What a command left running in its process group (`server &`, a daemon that did not
    detach) ends with it: TERM, then KILL after KILL_GRACE. The leader has been reaped, but while
    any member lives the group's id stays taken, so the signal cannot reach anyone else."""
    if not group_alive(pgid):
        return
    signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + KILL_GRACE
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(GROUP_POLL_S)
    signal_group(pgid, signal.SIGKILL)


def group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs. Killed members the system has not reaped yet
    (zombies: an init that reaps slowly, as in some containers) do not count."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member changed user (setuid): out of our reach either way
        return False
    return _running_member(pgid)


def _running_member(pgid: int) -> bool:
    """A member of the group that is not a zombie, from /proc (True where there is no /proc)."""
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return True
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()  # after "(comm)", which may hold spaces
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def marked_pids(mark: str) -> list[int]:
    """The running processes whose environment was started with MARK_VAR=mark (this user's, from
    /proc; none where there is no /proc): a task's descendants wherever they went, unless one
    cleared its environment."""
    needle = f"\0{MARK_VAR}={mark}\0".encode()
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    found = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in b"\0" + f.read() and not _zombie(pid):
                    found.append(pid)
        except OSError:  # gone, or another user's
            continue
    return found


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return True


def end_marked(mark: str, settle: float = KILL_GRACE) -> None:
    """KILL every process still marked `mark`, again until none is left or `settle` seconds pass: a
    child caught mid-fork or mid-exec (its environment not readable yet) is found on a later look."""
    deadline, empty_looks = time.monotonic() + settle, 0
    while empty_looks < 2 and time.monotonic() < deadline:  # two looks a poll apart find none
        signal_marked(mark, signal.SIGKILL)
        time.sleep(GROUP_POLL_S)
        empty_looks = 0 if marked_pids(mark) else empty_looks + 1


def signal_marked(mark: str, sig: int) -> None:
    for pid in marked_pids(mark):
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
