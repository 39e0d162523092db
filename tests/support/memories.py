"""Memory entries for tests: an Entry with fixed stamps, and a memory.json written directly
(as another process, or an older version, would leave it)."""

import json
from pathlib import Path

from nanohermes.memory.entry import Entry

STAMP = "2025-01-01T00:00:00Z"


def entry(text: str, *, kind: str = "fact", id: str = "e", uses: int = 0, updated: str = STAMP) -> Entry:
    return Entry(id, kind, text, STAMP, updated, uses)


def write_entries(path: Path, entries: list[Entry]) -> None:
    payload = {"version": 1, "entries": [e.__dict__ for e in entries]}
    path.write_text(json.dumps(payload), encoding="utf-8")
