"""Running one hook: its command by bash in the workspace, one JSON object on its stdin.

Through tools/processes.py's start_child like every command (its own process group, no
provider key), confined or not as sandbox/actors.py decides for its actor and event. Bounded both
ways: past its timeout the group is ended; past OUTPUT_BYTES of output it is ended too, what it
printed so far kept. What it started ends with it, also what left its group (`setsid`): each hook
run is marked in the environment of all it starts (processes.MARK_VAR). A hook that does not read
its stdin is not waited on for it (written without blocking, as the pipe takes it).
"""

from __future__ import annotations

import os
import secrets
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from nanohermes.errors import ToolError
from nanohermes.sandbox.policy import Policy
from nanohermes.tools.processes import (
    POLL_SECONDS,
    READ_CHUNK,
    SHELL,
    end_child,
    end_marked,
    signal_group,
    start_child,
)

# Both streams together: a hook answers in a line or a JSON object; a reason or a note for the
# model is kept far shorter than this (hooks/outcome.py caps it), so more is a flood.
OUTPUT_BYTES = 1_048_576
EXIT_GRACE = 0.5  # seconds after the hook exits that what it left running may keep the pipes open


@dataclass
class HookRun:
    code: int | None = None  # None: it did not finish (timed out, flooded, never started)
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    flooded: bool = False
    error: str = ""  # why it could not start
    seconds: float = 0.0


def run_hook(
    command: str,
    payload: bytes,
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    sandbox: Policy | None = None,
) -> HookRun:
    """Run `command` with `payload` on its stdin, to its end, its timeout or its flood; `env`: added
    to its environment; `sandbox`: the policy it runs under (None: unconfined)."""
    started = time.monotonic()
    run = HookRun()
    mark = secrets.token_hex(8)
    try:
        proc = start_child([*SHELL, command], cwd, sandbox, mark=mark, stdin=True, env=env)
    except (OSError, ToolError) as exc:
        run.error = str(exc)
        return run
    out, err = bytearray(), bytearray()
    try:
        _exchange(proc, payload, out, err, started + timeout, run)
        if not (run.timed_out or run.flooded):
            try:
                run.code = proc.wait(timeout=max(started + timeout - time.monotonic(), 0))
            except subprocess.TimeoutExpired:  # it closed its pipes and went on running
                run.timed_out = True
    finally:
        end_child(proc)  # the group ends: a timed-out or flooding hook, and whatever it started
        end_marked(mark)  # and what left the group
    run.stdout, run.stderr = _text(out), _text(err)
    run.seconds = time.monotonic() - started
    return run


def _exchange(proc, payload: bytes, out: bytearray, err: bytearray, deadline: float, run: HookRun) -> None:
    """Write the payload as the pipe takes it and read both streams, until they close, the
    deadline passes (run.timed_out) or the output passes OUTPUT_BYTES (run.flooded)."""
    streams = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    stdin, left, exited_at = proc.stdin.fileno(), memoryview(payload), None
    os.set_blocking(stdin, False)
    with selectors.DefaultSelector() as selector:
        for fd in streams:
            selector.register(fd, selectors.EVENT_READ)
        selector.register(stdin, selectors.EVENT_WRITE)
        while any(fd in selector.get_map() for fd in streams):
            now = time.monotonic()
            exited_at = exited_at or (now if proc.poll() is not None else None)
            if now >= deadline or (exited_at and now - exited_at > EXIT_GRACE):
                run.timed_out = now >= deadline
                return
            for key, _ in selector.select(timeout=max(min(POLL_SECONDS, deadline - now), 0.01)):
                if key.fd == stdin:
                    left = _write(stdin, left)
                    if not left:
                        selector.unregister(stdin)
                        proc.stdin.close()  # EOF: a hook reading all of stdin (`jq`, json.load) goes on
                elif data := os.read(key.fd, READ_CHUNK):
                    streams[key.fd] += data
                    if len(out) + len(err) > OUTPUT_BYTES:
                        run.flooded = True
                        signal_group(proc.pid, signal.SIGKILL)
                        return
                else:
                    selector.unregister(key.fd)


def _write(fd: int, left: memoryview) -> memoryview:
    """What is left to write after one non-blocking write (nothing once the hook closed its stdin)."""
    try:
        return left[os.write(fd, left) :]
    except BlockingIOError:
        return left
    except (BrokenPipeError, OSError):  # the hook does not read its stdin: fine
        return left[len(left) :]


def _text(data: bytearray) -> str:
    return bytes(data[:OUTPUT_BYTES]).decode("utf-8", "replace")
