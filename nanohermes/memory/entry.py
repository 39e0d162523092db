"""What one memory is: an Entry, its kinds and its size limit. Pure; shared by the store, the
prompt block and the compaction's candidates, so none of them needs another's module."""

from __future__ import annotations

from dataclasses import dataclass

MAX_ENTRY_CHARS = 400  # one fact, not a document; longer text is refused, never silently cut
KINDS = ("preference", "fact", "decision", "note")


@dataclass(frozen=True)
class Entry:
    id: str
    kind: str
    text: str
    created: str  # UTC, ISO 8601, second resolution
    updated: str
    uses: int = 0  # times injected into a prompt
    auto: bool = False  # saved by a compaction from what it dropped, not by the user or `remember`
