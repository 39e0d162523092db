"""Content-addressed blobs in a session's checkpoints directory, named by their SHA-256: loose
files under `blobs/` for write_file/edit_file (storage/checkpoints.py), packs for the workspace
snapshots (storage/snapshots.py). Both go with the session (storage/catalog.py)."""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import zlib
from pathlib import Path

from nanohermes.fileio import make_private_dirs, open_regular, read_bounded


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def put_blob(blobs: Path, data: bytes, name: str | None = None) -> str:
    """Store `data` (its digest `name`, when known) unless it is there already; its name.
    Written to a temporary name and renamed, so a blob is whole or absent."""
    name = name or digest(data)
    path = blobs / name
    if not path.exists():
        make_private_dirs(blobs)
        tmp = blobs / f".{name}.{os.getpid()}.tmp"
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    return name


PACK_INDEX = "packs.idx"  # one line per packed blob: "sha pack offset length"
MAX_PACK_INDEX_BYTES = 256 * 2**20  # ~100 bytes a blob: millions of contents
ZLIB_LEVEL = 1  # source text shrinks ~4x at ~200 MB/s; higher levels cost more time than they save space


class BlobStore:
    """The workspace snapshots' contents: each stored once, zlib-compressed, appended to a pack
    file (one file per process that writes, so a fork can hard-link them all: no pack is
    appended to by two sessions' readers), and found through `packs.idx`. Creating 5,000 loose
    files took 1.3 s of a 5,000-file first checkpoint; appending them to one file does not.
    The loose `blobs/` of write_file/edit_file checkpoints are read too."""

    def __init__(self, root: Path):
        self.root, self.packs = root, root / "packs"
        self._index: dict[str, tuple[str, int, int]] | None = None
        self._pack = None
        self._pack_name = ""
        self._pending: list[str] = []

    def has(self, sha: str) -> bool:
        return sha in self._locations() or (self.root / "blobs" / sha).exists()

    def add(self, data: bytes, sha: str) -> int:
        """Store `data` (its digest `sha`) unless it is there; the bytes it took on disk."""
        if self.has(sha):
            return 0
        packed = zlib.compress(data, ZLIB_LEVEL)
        if self._pack is None:
            make_private_dirs(self.packs)
            self._pack_name = f"{secrets.token_hex(6)}.pack"
            fd = os.open(self.packs / self._pack_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            self._pack = os.fdopen(fd, "wb")  # open for the session: close() ends it
        offset = self._pack.tell()
        self._pack.write(packed)
        self._locations()[sha] = (self._pack_name, offset, len(packed))
        self._pending.append(f"{sha} {self._pack_name} {offset} {len(packed)}\n")
        return len(packed)

    def flush(self) -> None:
        """What was added is on disk, its index lines after it: a manifest may name it now."""
        if not self._pending:
            return
        self._pack.flush()
        fd = os.open(self.packs / PACK_INDEX, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with open(fd, "w", encoding="ascii") as f:
            f.write("".join(self._pending))
        self._pending = []

    def read(self, sha: str, limit: int) -> bytes:
        """A content; OSError (FileNotFoundError) when it is not kept."""
        where = self._locations().get(sha)
        if where is None:
            return read_bounded(self.root / "blobs" / sha, limit)
        pack, offset, length = where
        with open_regular(self.packs / pack) as f:
            f.seek(offset)
            packed = f.read(length)
        try:
            data = zlib.decompressobj().decompress(packed, limit + 1)
        except zlib.error as exc:
            raise OSError(errno.EIO, f"a damaged pack: {exc}", str(self.packs / pack)) from None
        if len(data) > limit or digest(data) != sha:
            raise OSError(errno.EIO, "a kept content does not match its hash", str(self.packs / pack))
        return data

    def close(self) -> None:
        self.flush()
        if self._pack is not None:
            self._pack.close()
            self._pack = None

    def _locations(self) -> dict[str, tuple[str, int, int]]:
        if self._index is None:
            self._index = {}
            try:
                lines = read_bounded(self.packs / PACK_INDEX, MAX_PACK_INDEX_BYTES).decode("ascii", "replace")
            except FileNotFoundError:
                lines = ""
            for line in lines.splitlines():
                parts = line.split()
                if len(parts) == 4 and parts[2].isdigit() and parts[3].isdigit():  # a cut last line is skipped
                    self._index[parts[0]] = (parts[1], int(parts[2]), int(parts[3]))
        return self._index
