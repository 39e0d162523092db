"""/tasks: the session's background tasks (run_command with background; tools/background.py), and stopping
one; and the changes of helpers in worktrees (`task` with isolation = "worktree") not brought into the
workspace (loop/subagents.py: held), to see, apply or drop. Applying is the user's act: nothing is asked,
and it is written as any edit is (/undo, /rewind); the model is told what was applied or dropped."""

from __future__ import annotations

from nanohermes.calls import one_line
from nanohermes.errors import ToolError
from nanohermes.loop.nudges import HELPER_CHANGES
from nanohermes.tools.background_tools import state_line
from nanohermes.ui.command_table import command
from nanohermes.ui.toolview import coloured_diff

USAGE = "usage: /tasks | /tasks stop ID | /tasks diff|apply|drop NAME"
COMMAND_CHARS = 60  # one row per task on an 80-column screen
HELD_DIFF_LINES = 2_000  # /tasks diff is asked for: much of it, not a whole generated tree


def task_rows(tasks) -> list[str]:
    """One line per task: id, state, size of what it printed, the command."""
    rows = []
    for task in tasks.all():
        printed = f"out {task.stdout.total:,} B, err {task.stderr.total:,} B"
        rows.append(f"{task.id:<5} {state_line(task)} · {printed} · $ {one_line(task.command, COMMAND_CHARS)}")
    return rows or ["no background tasks (the model starts them with run_command background=true)"]


def held_rows(helpers) -> list[str]:
    """One line per helper whose changes are held: its name, how many files, its task, its worktree."""
    rows = []
    for held in helpers.held.values() if helpers is not None else ():
        files = f"{len(held.changes)} file{'s' if len(held.changes) != 1 else ''}"
        rows.append(
            f"{held.name:<5} held: {files} not brought in · {one_line(held.label, COMMAND_CHARS)} · "
            f"/tasks diff|apply|drop {held.name} (worktree {held.worktree.top})"
        )
    return rows


def tasks_command(tasks, arg: str, helpers=None) -> str:
    """Handle `/tasks ARG` for background tasks; errors come back as text."""
    name, _, rest = arg.strip().partition(" ")
    if not name:
        rows = task_rows(tasks) if tasks is not None else ["background tasks are not available in this session"]
        return "\n".join([*rows, *held_rows(helpers)])
    if tasks is None:
        return "background tasks are not available in this session"
    if name != "stop" or not rest.strip():
        return USAGE
    try:
        task = tasks.get(rest.strip())
    except ToolError as exc:
        return f"error: {exc}"
    if task.stop():
        return f"{task.id}: {state_line(task)}"
    return f"{task.id} had already finished: {state_line(task)}"


def not_held(helpers, name: str) -> str | None:
    """What to say when no helper's changes are held as `name`; None when they are."""
    if helpers is not None and name in helpers.held:
        return None
    held = ", ".join(helpers.held) if helpers is not None and helpers.held else "none"
    return f"no helper's changes are held as {name!r} (held: {held})"


def held_command(helpers, verb: str, name: str) -> tuple[str, str]:
    """`/tasks apply|drop NAME` of a held NAME: what to say, and the note the model gets."""
    label = helpers.held[name].label
    if verb == "drop":
        helpers.drop_held(name)
        return f"{name}: dropped, its worktree removed", f"the user dropped helper {label!r}'s ({name}) held changes"
    outcome = helpers.apply_held(name)
    said = f"applied {', '.join(outcome.applied)}" if outcome.applied else "applied nothing"
    if outcome.left:
        said += "; still held: " + "; ".join(f"{change.path} ({why})" for change, why in outcome.left)
    return f"{name}: {said}", f"the user brought in helper {label!r}'s ({name}) held changes: {said}"


@command(
    "/tasks",
    "/tasks [stop|diff|apply|drop ID]",
    "background tasks (stop ID); helpers' changes held (diff, apply, drop NAME)",
)
def _tasks(repl, arg: str) -> bool:
    agent = repl.runtime.agent
    verb, _, name = arg.strip().partition(" ")
    name = name.strip()
    if verb not in ("diff", "apply", "drop"):
        repl.say(tasks_command(agent.tasks, arg, agent.helpers))
    elif not name:
        repl.say(USAGE)
    elif (missing := not_held(agent.helpers, name)) is not None:
        repl.say(missing)
    elif verb == "diff":
        repl.show(coloured_diff(agent.helpers.held[name].diff.splitlines(), HELD_DIFF_LINES))
    else:
        said, note = held_command(agent.helpers, verb, name)
        repl.say(said)
        agent.tell(HELPER_CHANGES, note)
    return True
