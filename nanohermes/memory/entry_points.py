"""The two calls the rest of the agent makes into memory, so that its side is one line each:
block_for (the prompt: the block for a user message) and save_candidates (the loop: what a
compaction's summary found worth keeping). Neither raises for a broken memory file: memory
helps a turn, it must never stop one. Each returns the warning to show instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from nanohermes.memory.block import render_block
from nanohermes.memory.candidates import Candidate
from nanohermes.memory.entry import Entry
from nanohermes.memory.store import MemoryStore, MemoryStoreError


def block_for(store: MemoryStore, query: str) -> tuple[str, str | None]:
    """(the memory block for a user message, "" when nothing relevant is remembered; the
    warning to show when memory could not be read, else None)."""
    entries, warning = [], None
    if query.strip():
        try:
            entries = store.select_for_prompt(query)
        except Exception as exc:  # a broken memory file must not stop the agent
            warning = f"memory not used: {exc}"
    return render_block(entries), warning


@dataclass(frozen=True)
class SaveResult:
    added: list[Entry] = field(default_factory=list)  # new automatic entries (not near-duplicates of kept ones)
    error: str | None = None  # the warning to show when the store refused; what came before it is kept


def save_candidates(store: MemoryStore, candidates: Iterable[Candidate]) -> SaveResult:
    """What the summary found worth keeping in the dropped messages, added to memory as
    automatic entries (a near-duplicate of what memory holds is not added)."""
    added = []
    for candidate in candidates:
        try:
            result = store.add(candidate.text, candidate.kind, auto=True)
        except MemoryStoreError as exc:  # locked or corrupt: the compaction itself went fine
            return SaveResult(added, f"memories from the compaction not saved: {exc}")
        if not result.merged:
            added.append(result.entry)
    return SaveResult(added)
