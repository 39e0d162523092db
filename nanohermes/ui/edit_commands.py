"""/diff and /undo: what this session changed, and taking a change back. Each returns lines of
(text, style) spans to print."""

from __future__ import annotations

from pathlib import Path

from nanohermes.fileio import NotRegularFile, TooBig, read_bounded
from nanohermes.loop.nudges import UNDONE
from nanohermes.storage.checkpoints import (
    CHANGED_SINCE,
    MAX_READ_BYTES,
    MISSING,
    NOT_KEPT,
    NOTHING,
    THROUGH_SYMLINK,
    Checkpoint,
    Checkpoints,
)
from nanohermes.ui.command_table import command
from nanohermes.ui.escape import neutralize
from nanohermes.ui.toolview import Line, coloured_diff, unified_diff

DIFF_COMMAND_LINES = 400  # per file: /diff is asked for, so show much, but not a whole generated file
UNDO_DIFF_LINES = 40
NOTHING_TO_UNDO = (
    "nothing to undo: /undo takes back write_file and edit_file changes; what commands changed, /rewind does"
)


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "replace")


def _current(path: str) -> str | None:
    """The file's text now; None when it is gone. OSError when it is not a file or is huge."""
    try:
        return _text(read_bounded(Path(path), MAX_READ_BYTES))  # a FIFO or /dev/zero swapped in is not read
    except (FileNotFoundError, IsADirectoryError):
        return None


def _kept(checkpoints: Checkpoints, blob: str | None) -> str | None:
    """A kept content's text; None when it is missing from the checkpoints."""
    try:
        return _text(checkpoints.content(blob))
    except OSError:
        return None


def _failed(what: str, exc: OSError) -> list[Line]:
    where = f"{exc.filename}: " if exc.filename else ""
    return [[(f"{what}: {where}{exc.strerror or exc}", "yellow")]]


def diff_lines(checkpoints: Checkpoints | None) -> list[Line]:
    """Each file write_file and edit_file changed (and not undone): from before its first change to now."""
    try:
        changes = [c for c in (checkpoints.changes() if checkpoints else []) if not c.undone]
    except OSError as exc:  # the index is not a file (a FIFO), or too big
        return _failed("cannot read the checkpoints", exc)
    if not changes:
        return [
            [("no write_file or edit_file changes in this session (what commands changed: /rewind lists it)", "dim")]
        ]
    first: dict[str, Checkpoint] = {}
    counts: dict[str, int] = {}
    for change in changes:
        first.setdefault(change.path, change)
        counts[change.path] = counts.get(change.path, 0) + 1
    lines: list[Line] = []
    for path, change in first.items():
        n = counts[path]
        lines.append([(f"{neutralize(change.shown)}", "bold"), (f" · {n} change{'s' if n > 1 else ''}", "dim")])
        if not change.kept:
            lines.append([("  (the content before was too big to keep; no diff)", "dim")])
            continue
        try:
            now = _current(path)
        except (NotRegularFile, TooBig) as exc:
            lines.append([(f"  (not read: it is {getattr(exc, 'kind', exc.strerror)} now; no diff)", "yellow")])
            continue
        before = _kept(checkpoints, change.before) if change.existed else ""
        if before is None:
            lines.append([("  (the content before is missing from the checkpoints; no diff)", "yellow")])
            continue
        body = unified_diff(before, now if now is not None else "", change.shown)
        if now is None:
            lines.append([("  (deleted since)", "yellow")])
        lines += coloured_diff(body, DIFF_COMMAND_LINES) if body else [[("  (same as before the session)", "dim")]]
    return lines


def undo_lines(checkpoints: Checkpoints | None) -> tuple[list[Line], str | None]:
    """Undo the latest change; the lines to print and a note for the model (None if nothing changed)."""
    if checkpoints is None:
        return [[("undo is not available here", "yellow")]], None
    try:
        outcome = checkpoints.undo_last()
    except OSError as exc:  # the index is not a file, or the restore failed: nothing was half done
        return _failed("not undone", exc), None
    change = outcome.checkpoint
    if outcome.status == NOTHING:
        return [[(NOTHING_TO_UNDO, "dim")]], None
    shown = neutralize(change.shown)
    if outcome.status == CHANGED_SINCE:
        return [
            [
                (
                    f"not undone: {shown} changed since {change.tool} wrote it (by you or another program); "
                    "undoing would lose that change. /diff shows it.",
                    "yellow",
                )
            ]
        ], None
    if outcome.status == THROUGH_SYMLINK:
        said = (
            f"not undone: {shown} or a directory on its path is a symbolic link now (it was not when "
            f"{change.tool} wrote it); undoing through it could write outside the workspace"
        )
        return [[(said, "yellow")]], None
    if outcome.status == MISSING:
        where = checkpoints.root / "blobs"
        return [
            [(f"cannot undo {change.tool} on {shown}: the content kept before it is missing from {where}", "yellow")]
        ], None
    if outcome.status == NOT_KEPT:
        return [[(f"cannot undo {change.tool} on {shown}: the content before was too big to keep", "yellow")]], None
    before = _kept(checkpoints, change.before) if change.existed else ""
    body = unified_diff(_kept(checkpoints, change.after) or "", before or "", change.shown)
    done = "removed the file it created" if not change.existed else "restored the content from before it"
    left = sum(1 for c in checkpoints.changes() if not c.undone)
    lines = [
        [("↶ ", "cyan"), (f"undid {change.tool} on {shown}: {done}", ""), (f" · {left} more to undo", "dim")],
        *coloured_diff(body, UNDO_DIFF_LINES),
    ]
    note = f"The user ran /undo: {change.shown} is back to its content before your {change.tool} call"
    return lines, note + (" (the file no longer exists)." if not change.existed else ".")


@command("/diff", "/diff", "what write_file and edit_file changed in this session")
def _diff(repl, arg: str) -> bool:
    repl.show(diff_lines(repl.runtime.checkpoints))
    return True


@command("/undo", "/undo", "take back the last write or edit (again for the one before)")
def _undo(repl, arg: str) -> bool:
    lines, note = undo_lines(repl.runtime.checkpoints)
    repl.show(lines)
    if note:
        repl.runtime.agent.tell(UNDONE, note)
    return True
