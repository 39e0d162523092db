"""What one memory is: an Entry, its kinds and its size limit. Pure; shared by the store, the
prompt block and the compaction's candidates, so none of them needs another's module."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

MAX_ENTRY_CHARS = 400  # one fact, not a document; longer text is refused, never silently cut
KINDS = ("preference", "fact", "decision", "note")


KEPT_CONTROLS = "\n\t"  # a memory may have lines; every other control or format character goes


def normalised_text(text: str) -> str:
    """A memory's text as it is stored and shown: NFKC (full-width and compatibility forms as
    their plain letters: `＜／ｎａｎｏ…＞` is `</nano…>`), without format characters (zero-width
    space and joiners, soft hyphen, BOM, bidi controls) or control characters (ESC): none of
    them can hide a word from a check that the model then reads whole."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(c for c in text if c in KEPT_CONTROLS or unicodedata.category(c) not in ("Cf", "Cc"))


@dataclass(frozen=True)
class Entry:
    id: str
    kind: str
    text: str
    created: str  # UTC, ISO 8601, second resolution
    updated: str
    uses: int = 0  # times injected into a prompt
    auto: bool = False  # saved by a compaction from what it dropped, not by the user or `remember`
