"""Checkpoints of the files a session's write_file and edit_file changed, for /diff and /undo.

Kept under `$NANOHERMES_HOME/checkpoints/SESSION/`, outside the workspace, so undo works
without git: `blobs/` holds each content once (named by its SHA-256), `index.jsonl` one line
per change and one per undo (append-only, like a session; a cut last line is ignored).
A change is staged (its blobs written) before the file is written and committed after, so a
failed write leaves no checkpoint and a checkpoint that cannot be saved stops the write.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
import time
from dataclasses import dataclass, replace
from pathlib import Path

from nanohermes.fileio import NotRegularFile, make_private_dirs, open_regular, read_bounded
from nanohermes.storage.blobs import digest, put_blob

# An old content above this is not kept (write_file may overwrite a huge file): the change
# is recorded, and /undo says it cannot restore it. Same limit as the file tools' reads.
MAX_KEPT_BYTES = 4_194_304

UNDONE = "undone"
NOTHING = "nothing"  # no change left to undo
CHANGED_SINCE = "changed_since"  # the file is not what the change left: undoing would lose work
NOT_KEPT = "not_kept"  # the old content was too big to keep
MISSING = "missing"  # the kept content is gone from the checkpoints (removed, or not a file any more)
THROUGH_SYMLINK = "through_symlink"  # a component of the path is a symlink now: it was resolved when kept
# A file bigger than this is not what a change left (write_file's content came in one reply,
# capped at 8 MB of text, at most 4 bytes a char): /undo and /diff read no further.
MAX_READ_BYTES = 64 * 2**20
MAX_INDEX_BYTES = 64 * 2**20  # a line per change (~300 bytes): far more changes than a session makes


@dataclass(frozen=True)
class Checkpoint:
    seq: int
    call_id: str
    tool: str
    path: str  # absolute
    shown: str  # as the model and the user saw it
    before: str | None  # blob name of the old content; None: the file did not exist, or was not kept
    after: str
    existed: bool
    time: float
    undone: bool = False

    @property
    def kept(self) -> bool:
        return self.before is not None or not self.existed


@dataclass(frozen=True)
class UndoOutcome:
    status: str  # UNDONE | NOTHING | CHANGED_SINCE | NOT_KEPT
    checkpoint: Checkpoint | None = None


class Checkpoints:
    def __init__(self, root: Path):
        self.root = root
        self._changes: list[Checkpoint] = []
        self._loaded = False

    # -- recording ------------------------------------------------------------------------

    def stage(
        self, call_id: str, tool: str, target: Path, shown: str, before: bytes | None, after: bytes
    ) -> Checkpoint:
        """Keep both contents before the file is written. `before` None: the file is new.
        Raises OSError when they cannot be kept (the caller must not write then)."""
        existed = target.exists()
        kept = before if before is not None and len(before) <= MAX_KEPT_BYTES else None
        blob = self._put(kept) if kept is not None else None
        seq = max((c.seq for c in self._all()), default=0) + 1
        return Checkpoint(
            seq, call_id, tool, str(target.resolve()), shown, blob, self._put(after), existed, time.time()
        )

    def commit(self, checkpoint: Checkpoint) -> None:
        """The file now holds `after`: record the change."""
        record = {k: v for k, v in vars(checkpoint).items() if k != "undone"}
        self._append(record)
        self._changes.append(checkpoint)

    # -- reading --------------------------------------------------------------------------

    def changes(self) -> list[Checkpoint]:
        """Every change of this session, oldest first, undone ones marked."""
        return list(self._all())

    def for_call(self, call_id: str) -> Checkpoint | None:
        return next((c for c in reversed(self._all()) if c.call_id == call_id), None)

    def content(self, blob: str | None) -> bytes | None:
        """A kept content; None for none kept. OSError when the blob is gone or is not a file."""
        return None if blob is None else read_bounded(self.root / "blobs" / blob, MAX_READ_BYTES)

    # -- undo -----------------------------------------------------------------------------

    def undo_last(self) -> UndoOutcome:
        """Put back the content before the latest change not yet undone, if the file still
        holds what that change left. The path kept was resolved; it is walked again from / a
        component at a time without following a symlink, and the file is read, written and
        removed relative to the directory so opened: a directory swapped for a link after the
        edit cannot lead the restore outside (THROUGH_SYMLINK)."""
        live = [c for c in self._all() if not c.undone]
        if not live:
            return UndoOutcome(NOTHING)
        last = live[-1]
        try:
            parent = open_directory_nofollow(Path(last.path).parent)
        except SymlinkOnPath:
            return UndoOutcome(THROUGH_SYMLINK, last)
        except (FileNotFoundError, NotADirectoryError):
            return UndoOutcome(CHANGED_SINCE, last)
        try:
            outcome = self._undo_in(parent, Path(last.path).name, last)
        finally:
            os.close(parent)
        if outcome.status == UNDONE:
            self._append({"undone": last.seq})
            self._changes = [replace(c, undone=True) if c.seq == last.seq else c for c in self._changes]
        return outcome

    def _undo_in(self, parent: int, name: str, last: Checkpoint) -> UndoOutcome:
        try:
            with open_regular(name, dir_fd=parent, follow_symlinks=False) as f:
                current, mode = f.read(MAX_READ_BYTES + 1), stat.S_IMODE(os.fstat(f.fileno()).st_mode)
        except (FileNotFoundError, NotRegularFile):  # gone, or a FIFO or device swapped in
            return UndoOutcome(CHANGED_SINCE, last)
        except OSError as exc:
            if exc.errno != errno.ELOOP:  # O_NOFOLLOW met a symlink
                raise
            return UndoOutcome(THROUGH_SYMLINK, last)
        if len(current) > MAX_READ_BYTES or digest(current) != last.after:
            return UndoOutcome(CHANGED_SINCE, last)
        if not last.kept:
            return UndoOutcome(NOT_KEPT, last)
        try:
            before = self.content(last.before)
        except OSError:
            return UndoOutcome(MISSING, last)
        if last.existed:
            replace_in(parent, name, before, mode)
        else:
            os.unlink(name, dir_fd=parent)  # the name itself: a regular file a moment ago, never followed
        return UndoOutcome(UNDONE, last)

    # -- files ----------------------------------------------------------------------------

    def _all(self) -> list[Checkpoint]:
        if not self._loaded:
            self._changes = self._load()  # an index that cannot be read is read again next time
            self._loaded = True
        return self._changes

    def _load(self) -> list[Checkpoint]:
        try:  # OSError when it is not a file (a FIFO would wait for ever): no checkpoint is trusted then
            lines = read_bounded(self.root / "index.jsonl", MAX_INDEX_BYTES).decode("utf-8", "replace").splitlines()
        except FileNotFoundError:
            return []
        changes: dict[int, Checkpoint] = {}
        for line in lines:
            try:
                record = json.loads(line)
                if "undone" in record:
                    changes[record["undone"]] = replace(changes[record["undone"]], undone=True)
                else:
                    changes[record["seq"]] = Checkpoint(**record)
            except (ValueError, TypeError, KeyError):
                continue  # a line cut by a crash, or from another version: skip it
        return [changes[seq] for seq in sorted(changes)]

    def _put(self, data: bytes) -> str:
        return put_blob(self.root / "blobs", data)

    def _append(self, record: dict) -> None:
        make_private_dirs(self.root)
        fd = os.open(self.root / "index.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with open(fd, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")


class SymlinkOnPath(OSError):
    """A component of a kept path is a symlink now."""


def open_directory_nofollow(directory: Path) -> int:
    """A descriptor of `directory` (absolute), opened from / one component at a time;
    SymlinkOnPath when a component is a symlink, NotADirectoryError or FileNotFoundError when
    it is something else or gone."""
    return open_below(os.open("/", _DIRECTORY_FLAGS), directory.parts[1:])


_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def open_below(fd: int, parts, create: bool = False) -> int:
    """The directory `parts` below the open directory `fd` (which this takes and closes), a
    component at a time, never through a symlink (SymlinkOnPath); a missing one made if `create`."""
    try:
        for part in parts:
            if part in ("", ".", ".."):
                raise OSError(errno.EINVAL, "not a plain path component", part)
            try:
                inner = os.open(part, _DIRECTORY_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o755, dir_fd=fd)
                inner = os.open(part, _DIRECTORY_FLAGS, dir_fd=fd)
            except OSError as exc:  # Linux says ENOTDIR of a symlink opened so, others ELOOP
                if exc.errno in (errno.ENOTDIR, errno.ELOOP) and stat.S_ISLNK(os.lstat(part, dir_fd=fd).st_mode):
                    raise SymlinkOnPath(errno.ELOOP, "a symbolic link on the path", part) from None
                raise
            os.close(fd)
            fd = inner
        return fd
    except BaseException:
        os.close(fd)
        raise


def replace_in(parent: int, name: str, data: bytes, mode: int) -> None:
    """`name` in the directory `parent` replaced by `data` in one rename, keeping `mode`."""
    tmp = f".{name}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=parent)
        except OSError:
            pass
        raise
