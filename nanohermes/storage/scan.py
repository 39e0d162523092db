"""One scan of the workspace's files for a snapshot (storage/snapshots.py): what is there, and
the content of what changed, kept as blobs.

The files are the ones every tool sees (workspace.py: .gitignore respected, never .git,
never the state directory, symlinks not followed). A file whose size, mtime and ctime are what
the last scan recorded is not read again; only the others are hashed, and their content stored
once. An entry recorded within RACY_NS of its scan could have changed again in the same clock
tick, so it is hashed again next time (git's "racy clean" rule). Every cap leaves the file's
entry without content and a reason, so a rewind can say what it could not restore.
"""

from __future__ import annotations

import itertools
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from nanohermes.fileio import open_regular
from nanohermes.storage.blobs import BlobStore, digest

# Entry: (size, mtime_ns, ctime_ns, sha256 or None, mode, why not covered or None), a tuple
# because a 5,000-file manifest is held and written as a list per file.
Entry = tuple
SIZE, MTIME, CTIME, SHA, MODE, WHY = range(6)

MAX_FILE_BYTES = 4 * 2**20  # as /undo's cap (checkpoints.MAX_KEPT_BYTES): a source file is far smaller
MAX_CHECKPOINT_BYTES = 64 * 2**20  # new content one checkpoint may store: a generator's output, not a dataset
MAX_FILES = 50_000  # ten times a large project; a home directory taken for a workspace stops here
SCAN_SECONDS = 10.0  # a first scan of 5,000 files takes ~0.5 s (scripts/measure_checkpoints.py)
RACY_NS = 2_000_000_000  # the coarsest mtime granularity met (FAT: 2 s): a change within it can hide


@dataclass(frozen=True)
class Limits:
    file_bytes: int = MAX_FILE_BYTES
    checkpoint_bytes: int = MAX_CHECKPOINT_BYTES
    files: int = MAX_FILES
    seconds: float = SCAN_SECONDS
    racy_ns: int = RACY_NS


DEFAULT_LIMITS = Limits()


@dataclass
class Scan:
    entries: dict[str, Entry]
    started_ns: int
    complete: bool = True
    note: str = ""  # why it is not complete
    hashed: int = 0
    new_bytes: int = 0  # new contents, as they are (the per-checkpoint cap counts these)
    stored_bytes: int = 0  # what they took, compressed


def mib(n: int) -> str:
    return f"{n / 2**20:g} MB"


def listed_files(root: Path, exclude: Path | None, limits: Limits = DEFAULT_LIMITS) -> tuple[list[str], bool]:
    """The workspace's files, relative, as every tool sees them (rg when it is there, else the
    walk), and whether that is all of them: both stop at limits.files + 1 files or limits.seconds
    (a home directory taken for a workspace must not hold a command up for minutes)."""
    from nanohermes.workspace import find_rg, rg_files, walk

    rg = find_rg()
    files = rg_files(rg, root, exclude, timeout=limits.seconds) if rg else None
    if files is None:  # no rg, or it took too long: the walk, as far as the limits let it go
        deadline, files = time.monotonic() + limits.seconds, []
        for rel, _ in itertools.islice(walk(root, root, exclude=exclude), limits.files + 1):
            files.append(rel)
            if time.monotonic() > deadline:
                files.append("")  # a marker: there may be more
                break
    complete = len(files) <= limits.files and "" not in files
    return sorted(f.replace(os.sep, "/") for f in files if f)[: limits.files], complete


def scan(
    root: Path,
    exclude: Path | None,
    previous: dict[str, Entry],
    previous_ns: int,
    blobs: BlobStore,
    limits: Limits = DEFAULT_LIMITS,
) -> Scan:
    """The workspace now: `previous` (scanned at `previous_ns`) reused where the stat says
    nothing changed, the rest hashed and stored in `blobs` within the limits."""
    result = Scan({}, time.time_ns())
    deadline = time.monotonic() + limits.seconds
    files, listed_all = listed_files(root, exclude, limits)
    if not listed_all:
        result.complete, result.note = (
            False,
            f"the listing stopped (more than {limits.files:,} files or {limits.seconds:g} s)",
        )
    try:
        _scan_files(root, files, previous, previous_ns, blobs, limits, result, deadline)
    finally:
        blobs.flush()  # a manifest never names a content that is not on disk
    if not result.complete:  # what was not looked at is not gone: its last entry stands
        for path, entry in previous.items():
            result.entries.setdefault(path, entry)
    return result


def _scan_files(root, files, previous, previous_ns, blobs, limits, result: Scan, deadline: float) -> None:
    for number, rel in enumerate(files):
        if time.monotonic() > deadline:
            result.complete = False
            result.note = f"the scan stopped (over {limits.seconds:g} s); {len(files) - number:,} files not checked"
            break
        entry = _entry(root, rel, previous.get(rel), previous_ns, blobs, limits, result)
        if entry is not None:
            result.entries[rel] = entry


def _entry(root: Path, rel: str, prev: Entry | None, prev_ns: int, blobs: BlobStore, limits: Limits, result: Scan):
    path = os.path.join(root, rel)
    try:
        st = os.lstat(path)
    except OSError:  # gone since it was listed
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    key = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    racy = max(st.st_mtime_ns, st.st_ctime_ns) >= prev_ns - limits.racy_ns
    if prev is not None and tuple(prev[:3]) == key and not racy and prev[SHA]:
        return prev
    mode = stat.S_IMODE(st.st_mode)
    if st.st_size > limits.file_bytes:
        return (*key, None, mode, f"over the {mib(limits.file_bytes)} per-file cap ({mib(st.st_size)})")
    try:
        with open_regular(path, follow_symlinks=False) as f:
            data = f.read(limits.file_bytes + 1)
    except OSError as exc:
        return (*key, None, mode, f"unreadable ({exc.strerror or exc})")
    if len(data) > limits.file_bytes:  # it grew since the stat
        return (*key, None, mode, f"over the {mib(limits.file_bytes)} per-file cap")
    sha = digest(data)
    result.hashed += 1
    if not blobs.has(sha):
        if result.new_bytes + len(data) > limits.checkpoint_bytes:
            return (*key, None, mode, f"over the {mib(limits.checkpoint_bytes)} per-checkpoint cap")
        result.stored_bytes += blobs.add(data, sha)
        result.new_bytes += len(data)
    return (*key, sha, mode, None)
