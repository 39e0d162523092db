"""/tasks: the session's background tasks (run_command with background; tools/background.py), and stopping one."""

from __future__ import annotations

from nanohermes.calls import one_line
from nanohermes.errors import ToolError
from nanohermes.tools.background_tools import state_line
from nanohermes.ui.command_table import command

USAGE = "usage: /tasks | /tasks stop ID"
COMMAND_CHARS = 60  # one row per task on an 80-column screen


def task_rows(tasks) -> list[str]:
    """One line per task: id, state, size of what it printed, the command."""
    rows = []
    for task in tasks.all():
        printed = f"out {task.stdout.total:,} B, err {task.stderr.total:,} B"
        rows.append(f"{task.id:<5} {state_line(task)} · {printed} · $ {one_line(task.command, COMMAND_CHARS)}")
    return rows or ["no background tasks (the model starts them with run_command background=true)"]


def tasks_command(tasks, arg: str) -> str:
    """Handle `/tasks ARG`; errors come back as text."""
    if tasks is None:
        return "background tasks are not available in this session"
    name, _, rest = arg.strip().partition(" ")
    if not name:
        return "\n".join(task_rows(tasks))
    if name != "stop" or not rest.strip():
        return USAGE
    try:
        task = tasks.get(rest.strip())
    except ToolError as exc:
        return f"error: {exc}"
    if task.stop():
        return f"{task.id}: {state_line(task)}"
    return f"{task.id} had already finished: {state_line(task)}"


@command("/tasks", "/tasks [stop ID]", "background tasks the model started; stop one")
def _tasks(repl, arg: str) -> bool:
    repl.say(tasks_command(repl.runtime.agent.tasks, arg))
    return True
