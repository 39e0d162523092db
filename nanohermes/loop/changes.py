"""What a tool call changed in the workspace's files: a snapshot (storage/snapshots.py) before a
turn's first change and before every command that may write, another after it. What a command
changed is said to the user (a notice: "pytest changed 2 files, created 1") and to the model (a
line under the command's result); a file the snapshots cannot cover is said, never skipped
silently. A command confined read-only, or run in the background (its writes come later, so
the next snapshot sees them), is snapshotted before only or not at all."""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from nanohermes import events as ev
from nanohermes.storage.snapshots import AFTER, BEFORE, Change
from nanohermes.tools import ToolContext

WRITERS = frozenset({"write_file", "edit_file", "run_command"})
NAMES_SHOWN = 5  # paths named in the line the model reads; the rest counted


@dataclass(frozen=True)
class Watch:
    label: str  # "pytest": what the notice names
    command: bool  # run_command: its change is said


def before(ctx: ToolContext, name: str, arguments: str, emit: Callable[[object], None]) -> Watch | None:
    """Snapshot before a call that may write; what `after` needs, or None when nothing is watched."""
    if ctx.snapshots is None or ctx.snapshots.off or name not in WRITERS:
        return None
    args = arguments_of(arguments)
    read_only = ctx.sandbox is not None and ctx.sandbox.level == "read-only" and not args.get("unsandboxed")
    if name == "run_command" and read_only:
        return None
    try:
        _say(ctx.snapshots.checkpoint(BEFORE), "the checkpoint before it", emit)
    except OSError as exc:  # a full disk must not stop the work; it is said
        emit(ev.Notice(f"no checkpoint before {name}: {exc.strerror or exc}; /rewind cannot undo it", "warning"))
        return None
    if args.get("background"):
        return None
    return Watch(_label(args.get("command")) if name == "run_command" else name, name == "run_command")


def after(ctx: ToolContext, watch: Watch | None, emit: Callable[[object], None]) -> str:
    """Snapshot after the call; a command's change said in a notice, and in the line for under its
    result ("" for none: nothing changed, or not a command)."""
    if watch is None or ctx.snapshots is None:
        return ""
    try:
        change = ctx.snapshots.checkpoint(AFTER, watch.label)
    except OSError as exc:
        emit(ev.Notice(f"no checkpoint after {watch.label}: {exc.strerror or exc}", "warning"))
        return ""
    uncovered = _say(change, "", emit)
    if not watch.command or not (change or uncovered):
        return ""
    if change:
        emit(ev.Notice(f"{watch.label} {change.summary()}"))
    return f"\n[files: {_for_model(change)}{uncovered}]"


def _say(change: Change, when: str, emit: Callable[[object], None]) -> str:
    """Say what a snapshot could not cover; the same words for the model ('' when all is covered)."""
    parts = [f"{path} ({why})" for path, why in list(change.uncovered.items())[:NAMES_SHOWN]]
    if len(change.uncovered) > NAMES_SHOWN:
        parts.append(f"{len(change.uncovered) - NAMES_SHOWN} more")
    said = ("not covered by /rewind: " + ", ".join(parts)) if parts else ""
    if change.note:
        said = "; ".join(filter(None, [said, change.note]))
    if said:
        emit(ev.Notice(said + (f" ({when})" if when else ""), "warning"))
    return f"; {said}" if said else ""


def _for_model(change: Change) -> str:
    if not change:
        return "none changed"
    named = [f"{verb} {_names(paths)}" for verb, paths in _verbs(change) if paths]
    return "; ".join(named)


def _verbs(change: Change):
    return (("changed", change.changed), ("created", change.created), ("deleted", change.removed))


def _names(paths: list[str]) -> str:
    shown = ", ".join(paths[:NAMES_SHOWN])
    return shown + (f" and {len(paths) - NAMES_SHOWN} more" if len(paths) > NAMES_SHOWN else "")


def arguments_of(arguments: str) -> dict:
    """A call's arguments as a dict; {} when they are not a JSON object (the tool says why when it runs)."""
    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        return {}
    return args if isinstance(args, dict) else {}


def _label(command) -> str:
    """The program a command runs first: 'pytest' of 'pytest -x tests'."""
    try:
        words = shlex.split(str(command or ""))
    except ValueError:
        words = str(command or "").split()
    words = [w for w in words if "=" not in w.split("/")[0]] or ["the command"]  # skip FOO=1 prefixes
    return os.path.basename(words[0]) or "the command"
