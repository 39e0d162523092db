"""Content-addressed blobs: each content stored once under `blobs/`, named by its SHA-256.
Shared by a session's checkpoints (write_file/edit_file, storage/checkpoints.py) and its
workspace snapshots (storage/snapshots.py), so both are pruned with the session."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def put_blob(blobs: Path, data: bytes, name: str | None = None) -> str:
    """Store `data` (its digest `name`, when known) unless it is there already; its name.
    Written to a temporary name and renamed, so a blob is whole or absent."""
    name = name or digest(data)
    path = blobs / name
    if not path.exists():
        blobs.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = blobs / f".{name}.{os.getpid()}.tmp"
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    return name
