"""Warnings said once per cause: a start warning (a repository's ignored allow rule, untrusted hooks,
a broken skill) is shown the first time, and again only when its words change — the words name
the cause (the file, the rule), so a new cause is shown anew.

Kept in $NANOHERMES_HOME/seen-warnings.json: a list of short digests (workspace and words), the
newest last, at most MAX_SEEN. A file that cannot be read or written only means a warning is shown
again; it never stops a run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from nanohermes.errors import NanoHermesError
from nanohermes.fileio import read_bounded

FILE = "seen-warnings.json"
MAX_SEEN = 500  # far more warnings than a user's projects raise; the oldest go first
MAX_BYTES = 100_000  # MAX_SEEN digests of 16 hex characters, with room to spare


class _Unwritable(NanoHermesError):
    pass


def once(warn: Callable[[str], None], home: Path, workspace: Path) -> Callable[[str], None]:
    """`warn`, passing on only what was not said before for this workspace."""
    path = Path(home) / FILE

    def say(text: str) -> None:
        digest = hashlib.sha256(f"{Path(workspace).resolve()}\0{text}".encode()).hexdigest()[:16]
        seen = _read(path)
        if digest in seen:
            return
        warn(text)
        _write(path, [*seen, digest][-MAX_SEEN:])

    return say


def _read(path: Path) -> list[str]:
    try:
        data = json.loads(read_bounded(path, MAX_BYTES).decode("utf-8"))
    except (OSError, ValueError):
        return []
    return [d for d in data if isinstance(d, str)] if isinstance(data, list) else []


def _write(path: Path, digests: list[str]) -> None:
    from nanohermes.storage.locking import replace_atomically

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(path, json.dumps(digests).encode(), ".seen-", _Unwritable)
    except (OSError, _Unwritable):
        pass
