"""A worktree helper's changes brought into the workspace (loop/isolated.py), file by file as any
edit is: asked as write_file is when the model's turn brings them (the mode, the rules, the answers
given; the question shows the helper's diff of the file), asked nothing when the user does
(`/tasks apply`), and written with a checkpoint (/undo) between two snapshots (/rewind).

A file whose content in the workspace is no longer the one the helper started from (someone
changed it since: the user, the parent, another helper brought in first) is a conflict: it is not
written, and the outcome says so; the caller keeps what was left for `/tasks`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from nanohermes.errors import ToolError
from nanohermes.fileio import NotRegularFile
from nanohermes.loop import changes as watched
from nanohermes.storage.worktrees import FileChange
from nanohermes.tools import ToolContext
from nanohermes.tools.files import PREVIEW_DIFF_LINES, UNCAPPED, capped_diff, read_current, write_with_checkpoint
from nanohermes.tools.files import write_file as write_tool
from nanohermes.tools.paths import display_path, resolve_path

CONFLICT = "changed in the workspace since the helper started"
PREVIEW_NEW_LINES = 40  # a new file's first lines in the question, as write_file shows one


@dataclass
class Outcome:
    applied: list[str] = field(default_factory=list)  # paths written (or already as the helper left them)
    left: list[tuple[FileChange, str]] = field(default_factory=list)  # not written, and why

    @property
    def conflicts(self) -> list[str]:
        return [change.path for change, why in self.left if why == CONFLICT]


def apply_changes(
    changes: list[FileChange], ctx: ToolContext, emit: Callable[[object], None], approvals=None, source: str = ""
) -> Outcome:
    """Write each change the workspace can take; `approvals` (loop/approvals.py) asks for each
    (None: the user asked for them all); `source` names the helper in the question."""
    outcome = Outcome()
    todo = [change for change in changes if not _left_at_once(change, outcome)]
    watch = watched.before(ctx, "write_file", "{}", emit) if todo else None
    try:
        for change in todo:
            why = _apply(change, ctx, approvals, source)
            if why:
                outcome.left.append((change, why))
            else:
                outcome.applied.append(change.path)
    finally:
        watched.after(ctx, watch, emit)
    return outcome


def _left_at_once(change: FileChange, outcome: Outcome) -> bool:
    if change.note:
        outcome.left.append((change, change.note))
    return bool(change.note)


def _apply(change: FileChange, ctx: ToolContext, approvals, source: str) -> str:
    """'' when the workspace holds the helper's content now; else why not."""
    try:
        target = resolve_path(ctx, change.path, must_exist=False)
    except ToolError as exc:
        return str(exc)
    shown = display_path(ctx, target)
    if approvals is not None:
        refusal = approvals.refusal(_question(change, source), _arguments(shown, change), ctx)
        if refusal is not None:
            return refusal
    try:  # looked at after the question: the user may have changed the file meanwhile
        current = _current(ctx, target)
    except (NotRegularFile, IsADirectoryError):
        return f"{CONFLICT} (not a regular file now)"
    if current == change.after:
        return ""
    if current != change.before:
        return CONFLICT
    try:
        _write(ctx, target, shown, current, change)
    except (ToolError, OSError) as exc:
        return f"not written: {exc}"
    return ""


def _current(ctx: ToolContext, target) -> bytes | None:
    try:
        return read_current(ctx, target)
    except FileNotFoundError:
        return None


def _write(ctx: ToolContext, target, shown: str, current: bytes | None, change: FileChange) -> None:
    if change.after is None:  # /rewind's snapshots cover a removal; /undo covers writes only
        target.unlink()
        return
    write_with_checkpoint(ctx, "task", target, shown, current, change.after, True)
    mode = target.stat().st_mode
    if change.executable and mode & 0o111 != 0o111:
        os.chmod(target, mode | 0o111)


def _arguments(shown: str, change: FileChange) -> str:
    """The call as rules and answers see it: write_file of this path with this content."""
    content = (change.after or b"").decode("utf-8", "surrogateescape")
    return json.dumps({"path": shown, "content": content})


def _question(change: FileChange, source: str):
    """write_file, with the helper's change of this file as what the user sees."""

    def preview(ctx, path: str, content: str, whole: bool = False) -> str:
        head = f"from helper {source}:\n" if source else ""
        return head + change_preview(change, path, UNCAPPED if whole else PREVIEW_DIFF_LINES)

    return replace(write_tool, preview=preview)


def change_preview(change: FileChange, shown: str, max_lines: int) -> str:
    """The change of one file as a person reads it: a diff, a new file's lines, a removal."""
    if change.after is None:
        return f"deletes {shown}"
    if b"\0" in change.after[:8192] or (change.before is not None and b"\0" in change.before[:8192]):
        return f"a binary file, {len(change.after):,} bytes"
    after = change.after.decode("utf-8", "replace")
    if change.before is None:
        lines = after.splitlines()
        shown_lines = lines[: min(max_lines, PREVIEW_NEW_LINES if max_lines != UNCAPPED else len(lines))]
        more = f"\n… {len(lines) - len(shown_lines)} more lines" if len(lines) > len(shown_lines) else ""
        return f"new file, {len(lines)} lines\n" + "\n".join("+" + line for line in shown_lines) + more
    return capped_diff(change.before.decode("utf-8", "replace"), after, shown, max_lines)[0]
