"""The model's side of background tasks (tools/background.py): what run_command says when it
starts one, `task_output` and `task_stop` (the tools keep their `task_` names: a contract with
the model). Tasks are reached through ctx.tasks."""

from __future__ import annotations

import signal

from nanohermes.errors import ToolError
from nanohermes.sandbox.notes import blocked
from nanohermes.sandbox.policy import Policy
from nanohermes.text import cut_utf8, split_budget
from nanohermes.tools import ToolContext, tool
from nanohermes.tools.background import (
    EXITED,
    KEPT_FINISHED,
    RUNNING,
    STOPPED,
    TASK_CAPTURE_BYTES,
    BackgroundTasks,
    StreamCapture,
    Task,
)

MAX_WAIT_S = 120  # task_output's wait is capped like a command's default timeout: the turn must go on
READ_RESERVE_BYTES = 600  # header, labels and notes beside the output, within the result's cap


def _tasks(ctx: ToolContext) -> BackgroundTasks:
    if ctx.tasks is None:
        raise ToolError("background tasks are not available in this session")
    return ctx.tasks


def start_background(ctx: ToolContext, command: str, timeout: float | None, sandbox: Policy | None) -> str:
    """run_command with background=true: start the task (inside `sandbox`) and say how to follow it."""
    if timeout is not None and timeout <= 0:
        raise ToolError("timeout must be a positive number of seconds")
    task = _tasks(ctx).start(command, ctx.workspace, timeout, sandbox)
    limit = f"; it is killed after {timeout:g} s" if timeout else ""
    return (
        f"started background task {task.id} (pid {task.pid}): $ {command}\n"
        f"It runs on while you work{limit}. Read what it prints with task_output id={task.id}; "
        f"stop it with task_stop id={task.id}. It is stopped when the session ends."
    )


@tool(params={"id": "", "wait": "seconds"}, lean=False)
def task_output(ctx: ToolContext, id: str, wait: float = 0) -> str:
    """A background task's new output and state."""
    task = _tasks(ctx).get(id)
    task.wait(min(max(wait, 0), MAX_WAIT_S))
    return read_new_output(task, ctx.max_output - READ_RESERVE_BYTES)


@tool(params={"id": ""}, lean=False)
def task_stop(ctx: ToolContext, id: str) -> str:
    """Stop a background task."""
    task = _tasks(ctx).get(id)
    if not task.stop():
        return f"task {task.id} had already finished: {state_line(task)}"
    return f"stopped task {task.id}: {state_line(task)}\n" + read_new_output(task, 2_000, header=False)


def state_line(task: Task) -> str:
    """`running for 12 s (pid 42)`, `exited with code 1 after 3.2 s`, `stopped after 9 s (SIGTERM)`."""
    state, took = task.state, f"{task.seconds():.1f} s"
    if state == RUNNING:
        return f"running for {took} (pid {task.pid})"
    code = task.exit_code
    if state == EXITED:
        return f"exited with code {code} after {took}"
    how = "stopped" if state == STOPPED else f"killed at its {task.timeout:g} s timeout"
    return f"{how} after {took}" + (f" ({_signal_name(code)})" if code is not None and code < 0 else "")


def read_new_output(task: Task, budget: int, header: bool = True) -> str:
    """What the task printed since the last read, within `budget` bytes; what stays unread
    (over the budget) is read next time, and what the capture dropped is said."""
    with task.lock:
        state = state_line(task)
        unread = {name: capture.unread() for name, capture in (("stdout", task.stdout), ("stderr", task.stderr))}
        shares = split_budget(max(budget, 0), len(unread["stdout"]), len(unread["stderr"]))
        parts = [f"task {task.id}: $ {task.command}\n{state}"] if header else []
        for (name, capture), share in zip((("stdout", task.stdout), ("stderr", task.stderr)), shares):
            parts += _stream_part(name, capture, unread[name], share)
        if task.done.is_set() and all(c.read == len(c.data) for c in (task.stdout, task.stderr)):
            task.stdout.let_go()  # finished and all of it read: its capture is not kept all session
            task.stderr.let_go()
    if not any(unread.values()):
        parts.append("(no new output)")
    if note := _blocked_note(task, b"\n".join(unread.values())):
        parts.append(note)
    return "\n".join(parts)


def _blocked_note(task: Task, new: bytes) -> str | None:
    """What the sandbox blocked, as the new output and the hosts the proxy refused since say."""
    if task.sandbox is None:
        return None
    hosts = task.refused_hosts[task.hosts_said :]
    task.hosts_said += len(hosts)
    code = task.exit_code if task.exit_code is not None else 1  # running: no success to report yet
    found = blocked(code, new.decode("utf-8", "replace"), task.sandbox, task.cwd, hosts)
    return found.note if found else None


def _stream_part(name: str, capture: StreamCapture, unread: bytes, budget: int) -> list[str]:
    """The stream's new bytes (advancing the read offset past what is shown) and its notes."""
    parts = []
    if unread:
        shown = unread[: cut_utf8(unread, budget)]
        if len(shown) < len(unread) and b"\n" in shown:  # the rest of a cut line comes whole next time
            shown = shown[: shown.rindex(b"\n") + 1]
        capture.read += len(shown)
        parts += [f"[{name}]", shown.decode("utf-8", "replace").removesuffix("\n")]
        if len(shown) < len(unread):
            parts.append(f"… {len(unread) - len(shown):,} more bytes of {name} not read yet: call task_output again")
    if capture.lost:
        parts.append(
            f"note: {capture.lost:,} bytes of {name} were never read and are gone (only the newest "
            f"{KEPT_FINISHED} finished tasks keep their output)"
        )
        capture.lost = 0
    if capture.dropped and capture.read == len(capture.data):
        parts.append(
            f"note: {name} kept its first {TASK_CAPTURE_BYTES:,} bytes; {capture.dropped:,} later bytes "
            "were dropped (redirect the output to a file to keep all of it)"
        )
    return parts


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


TASK_TOOLS = [task_output, task_stop]
