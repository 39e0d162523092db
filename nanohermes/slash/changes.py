"""/diff and /undo: what write_file and edit_file changed in this session, and taking a change back
(the checkpoints of storage/checkpoints.py; what commands changed is /rewind's). Each returns an
Outcome; /undo's carries the note that tells the model its change was taken back."""

from __future__ import annotations

import difflib
from pathlib import Path

from nanohermes.fileio import NotRegularFile, TooBig, read_bounded
from nanohermes.loop.nudges import UNDONE
from nanohermes.slash.outcome import MARK, QUIET, STRONG, WARNING, Block, Diff, Note, Outcome, Spans, Text, said
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

DIFF_CONTEXT_LINES = 2  # as the tools' own diffs
DIFF_COMMAND_LINES = 400  # per file: /diff is asked for, so show much, but not a whole generated file
UNDO_DIFF_LINES = 40
NOTHING_TO_UNDO = (
    "nothing to undo: /undo takes back write_file and edit_file changes; what commands changed, /rewind does"
)
NO_CHANGES = "no write_file or edit_file changes in this session (what commands changed: /rewind lists it)"


def unified_diff(before: str, after: str, shown: str) -> list[str]:
    return list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), f"a/{shown}", f"b/{shown}", n=DIFF_CONTEXT_LINES, lineterm=""
        )
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


def _failed(what: str, exc: OSError) -> Outcome:
    where = f"{exc.filename}: " if exc.filename else ""
    return said(Text(f"{what}: {where}{exc.strerror or exc}", WARNING))


def diff(runtime, arg: str = "") -> Outcome:
    return diff_outcome(runtime.checkpoints)


def diff_outcome(checkpoints: Checkpoints | None) -> Outcome:
    """Each file write_file and edit_file changed (and not undone): from before its first change to now."""
    try:
        changes = [c for c in (checkpoints.changes() if checkpoints else []) if not c.undone]
    except OSError as exc:  # the index is not a file (a FIFO), or too big
        return _failed("cannot read the checkpoints", exc)
    if not changes:
        return said(Text(NO_CHANGES, QUIET))
    first: dict[str, Checkpoint] = {}
    counts: dict[str, int] = {}
    for change in changes:
        first.setdefault(change.path, change)
        counts[change.path] = counts.get(change.path, 0) + 1
    blocks: list[Block] = []
    for path, change in first.items():
        n = counts[path]
        blocks.append(Spans(((change.shown, STRONG), (f" · {n} change{'s' if n > 1 else ''}", QUIET))))
        blocks += _file_diff(checkpoints, path, change)
    return Outcome(tuple(blocks))


def _file_diff(checkpoints: Checkpoints, path: str, change: Checkpoint) -> list[Block]:
    if not change.kept:
        return [Text("  (the content before was too big to keep; no diff)", QUIET)]
    try:
        now = _current(path)
    except (NotRegularFile, TooBig) as exc:
        return [Text(f"  (not read: it is {getattr(exc, 'kind', exc.strerror)} now; no diff)", WARNING)]
    before = _kept(checkpoints, change.before) if change.existed else ""
    if before is None:
        return [Text("  (the content before is missing from the checkpoints; no diff)", WARNING)]
    body = unified_diff(before, now if now is not None else "", change.shown)
    gone = [Text("  (deleted since)", WARNING)] if now is None else []
    return gone + [Diff(tuple(body), DIFF_COMMAND_LINES) if body else Text("  (same as before the session)", QUIET)]


def undo(runtime, arg: str = "") -> Outcome:
    return undo_outcome(runtime.checkpoints)


def undo_outcome(checkpoints: Checkpoints | None) -> Outcome:
    """Undo the latest change: what to show, and a note for the model when a file changed back."""
    if checkpoints is None:
        return said(Text("undo is not available here", WARNING))
    try:
        outcome = checkpoints.undo_last()
    except OSError as exc:  # the index is not a file, or the restore failed: nothing was half done
        return _failed("not undone", exc)
    change = outcome.checkpoint
    refused = _refusal(outcome.status, change, checkpoints)
    if refused is not None:
        return said(refused)
    before = _kept(checkpoints, change.before) if change.existed else ""
    body = unified_diff(_kept(checkpoints, change.after) or "", before or "", change.shown)
    done = "removed the file it created" if not change.existed else "restored the content from before it"
    left = sum(1 for c in checkpoints.changes() if not c.undone)
    line = Spans(
        (("↶ ", MARK), (f"undid {change.tool} on {change.shown}: {done}", ""), (f" · {left} more to undo", QUIET))
    )
    note = f"The user ran /undo: {change.shown} is back to its content before your {change.tool} call"
    note += " (the file no longer exists)." if not change.existed else "."
    return said(line, Diff(tuple(body), UNDO_DIFF_LINES), note=Note(UNDONE, note))


def _refusal(status: str, change: Checkpoint, checkpoints: Checkpoints) -> Text | None:
    """Why nothing was undone, or None when the change was taken back."""
    if status == NOTHING:
        return Text(NOTHING_TO_UNDO, QUIET)
    if status == CHANGED_SINCE:
        return Text(
            f"not undone: {change.shown} changed since {change.tool} wrote it (by you or another program); "
            "undoing would lose that change. /diff shows it.",
            WARNING,
        )
    if status == THROUGH_SYMLINK:
        return Text(
            f"not undone: {change.shown} or a directory on its path is a symbolic link now (it was not when "
            f"{change.tool} wrote it); undoing through it could write outside the workspace",
            WARNING,
        )
    if status == MISSING:
        where = checkpoints.root / "blobs"
        return Text(
            f"cannot undo {change.tool} on {change.shown}: the content kept before it is missing from {where}", WARNING
        )
    if status == NOT_KEPT:
        return Text(f"cannot undo {change.tool} on {change.shown}: the content before was too big to keep", WARNING)
    return None
