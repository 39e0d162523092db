"""/tasks diff|apply|drop NAME: the changes of helpers in worktrees (`task` with isolation = "worktree")
not brought into the workspace (loop/subagents.py: held), to see, bring in or drop. Bringing them in is
the user's act: nothing is asked (so an editor offers it as the REPL does), and each file is written as
any edit is (/undo, /rewind); the model is told what was applied or dropped."""

from __future__ import annotations

from nanohermes.calls import one_line
from nanohermes.loop.nudges import HELPER_CHANGES
from nanohermes.slash.outcome import Diff, Note, Outcome, Text, said

VERBS = ("diff", "apply", "drop")
LABEL_CHARS = 60  # one row per helper on an 80-column screen, as a task's command
HELD_DIFF_LINES = 2_000  # /tasks diff is asked for: much of it, not a whole generated tree


def held_rows(helpers) -> list[str]:
    """One line per helper whose changes are held: its name, how many files, its task, its worktree."""
    rows = []
    for held in helpers.held.values() if helpers is not None else ():
        files = f"{len(held.changes)} file{'s' if len(held.changes) != 1 else ''}"
        rows.append(
            f"{held.name:<5} held: {files} not brought in · {one_line(held.label, LABEL_CHARS)} · "
            f"/tasks diff|apply|drop {held.name} (worktree {held.worktree.top})"
        )
    return rows


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
    done = f"applied {', '.join(outcome.applied)}" if outcome.applied else "applied nothing"
    if outcome.left:
        done += "; still held: " + "; ".join(f"{change.path} ({why})" for change, why in outcome.left)
    return f"{name}: {done}", f"the user brought in helper {label!r}'s ({name}) held changes: {done}"


def held_outcome(helpers, verb: str, name: str, usage: str) -> Outcome:
    """`/tasks diff|apply|drop NAME`: the held diff, or what was applied or dropped with the model's note."""
    if not name:
        return said(Text(usage))
    if (missing := not_held(helpers, name)) is not None:
        return said(Text(missing))
    if verb == "diff":
        return said(Diff(tuple(helpers.held[name].diff.splitlines()), HELD_DIFF_LINES))
    text, note = held_command(helpers, verb, name)
    return said(Text(text), note=Note(HELPER_CHANGES, note))
