"""Putting the workspace back to a snapshot (storage/snapshots.py), for /rewind.

`plan` is pure: from the manifest to restore, the workspace now and what the agent last left,
it lists the files to write back and to remove, those it cannot (not covered: over a cap, or
unreadable when the snapshot was taken) and the conflicts — files someone else changed: they
differ from what the agent last left, or a snapshot before a later turn found them changed.
Those are never overwritten unless the caller says so. `apply` writes relative to directories
opened from / without following a symlink (checkpoints.open_below): a directory swapped for a
link cannot lead a write out.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from nanohermes.storage.blobs import BlobStore
from nanohermes.storage.checkpoints import open_below, open_directory_nofollow, replace_in
from nanohermes.storage.scan import MODE, SHA, WHY, Entry
from nanohermes.storage.snapshots import identity

MAX_BLOB_BYTES = 64 * 2**20  # no blob is bigger than the per-file cap; a bigger one is not ours


@dataclass
class Plan:
    write: list[str] = field(default_factory=list)  # back to the snapshot's content
    remove: list[str] = field(default_factory=list)  # created since
    conflicts: list[str] = field(default_factory=list)  # changed outside NanoHermes since the agent left them
    uncovered: dict[str, str] = field(default_factory=dict)  # cannot be put back, and why

    def __bool__(self) -> bool:
        return bool(self.write or self.remove)


@dataclass
class Outcome:
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # conflicts left as they are
    failed: dict[str, str] = field(default_factory=dict)  # and why
    uncovered: dict[str, str] = field(default_factory=dict)


def plan(
    target: dict[str, Entry], complete: bool, now: dict[str, Entry], left: dict[str, Entry], outside: set[str]
) -> Plan:
    """What restoring `target` (its scan `complete` or not) changes in the workspace `now`; a file
    that differs from what the agent `left`, or is among those changed `outside` NanoHermes
    since the target (a snapshot before a later turn found it changed), is a conflict."""
    result = Plan()
    for path in sorted(target.keys() | now.keys()):
        want, have = target.get(path), now.get(path)
        if identity(want) == identity(have):
            continue
        if want is None and not complete:
            result.uncovered[path] = "created since, but the snapshot's scan was incomplete: left as it is"
            continue
        if want is not None and want[SHA] is None:
            result.uncovered[path] = want[WHY] or "not covered"
            continue
        (result.write if want is not None else result.remove).append(path)
        if identity(have) != identity(left.get(path)) or path in outside:
            result.conflicts.append(path)
    return result


def apply(todo: Plan, target: dict[str, Entry], workspace: Path, blobs: BlobStore, overwrite: bool) -> Outcome:
    """Carry out `todo`; its conflicts too when `overwrite`. Each file on its own: one that fails is said."""
    outcome = Outcome(uncovered=dict(todo.uncovered))
    skip = set() if overwrite else set(todo.conflicts)
    outcome.kept = sorted(skip)
    root = open_directory_nofollow(Path(workspace).resolve())
    try:
        for path in todo.write:
            if path not in skip:
                _attempt(outcome, outcome.written, path, lambda p=path: _write(root, p, target[p], blobs))
        for path in todo.remove:
            if path not in skip:
                _attempt(outcome, outcome.removed, path, lambda p=path: _remove(root, p))
    finally:
        os.close(root)
    return outcome


def _attempt(outcome: Outcome, done: list[str], path: str, action) -> None:
    try:
        action()
        done.append(path)
    except OSError as exc:
        outcome.failed[path] = "a symbolic link on its path" if exc.errno == errno.ELOOP else exc.strerror or str(exc)


def _write(root: int, path: str, entry: Entry, blobs: BlobStore) -> None:
    data = blobs.read(entry[SHA], MAX_BLOB_BYTES)
    parent = _open_parent(root, path, create=True)
    try:
        name = path.rsplit("/", 1)[-1]
        try:  # a directory now where the file was (rare): only an empty one is taken away
            if stat.S_ISDIR(os.lstat(name, dir_fd=parent).st_mode):
                os.rmdir(name, dir_fd=parent)
        except FileNotFoundError:
            pass
        replace_in(parent, name, data, entry[MODE])
    finally:
        os.close(parent)


def _remove(root: int, path: str) -> None:
    parent = _open_parent(root, path, create=False)
    try:
        os.unlink(path.rsplit("/", 1)[-1], dir_fd=parent)
    finally:
        os.close(parent)
    parts = path.split("/")[:-1]
    while parts:  # directories the removal left empty (a generator's output folder) go too
        try:
            os.rmdir("/".join(parts), dir_fd=root)
        except OSError:
            break
        parts.pop()


def _open_parent(root: int, path: str, create: bool) -> int:
    """The directory holding `path` (relative to `root`), never through a symlink (ELOOP)."""
    return open_below(os.dup(root), path.split("/")[:-1], create)
