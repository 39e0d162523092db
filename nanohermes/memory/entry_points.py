"""The two calls the rest of the agent makes into memory, so that its side is one line each:
block_for (the prompt: the block for a user message) and save_candidates (the loop: what a
compaction's summary found worth keeping). Neither raises for a broken memory file: memory
helps a turn, it must never stop one. Each returns the warning to show instead.

A compaction's memories are saved only with the approval `remember` needs (loop/approvals.py:
for_memory says SAVE, HOLD or DROP): text injected through a file or a page must not persist itself
into every later session. Held ones wait in the store's pending list for the user (/memory pending).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
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


SAVE, HOLD, DROP = "save", "hold", "drop"  # what the approval `remember` needs says of a candidate


@dataclass(frozen=True)
class SaveResult:
    added: list[Entry] = field(default_factory=list)  # new automatic entries (not near-duplicates of kept ones)
    error: str | None = None  # the warning to show when the store refused; what came before it is kept
    held: list[Entry] = field(default_factory=list)  # waiting for the user's yes (/memory pending)


def save_candidates(
    store: MemoryStore, candidates: Iterable[Candidate], verdict: Callable[[dict], str] = lambda args: SAVE
) -> SaveResult:
    """What the summary found worth keeping in the dropped messages: each added to memory as an
    automatic entry when `verdict({"text", "kind"})` says SAVE (a near-duplicate of what memory
    holds is not added), held for the user's yes when HOLD, dropped when DROP."""
    added, held = [], []
    for candidate in candidates:
        decided = verdict({"text": candidate.text, "kind": candidate.kind})
        target = store if decided == SAVE else store.pending if decided == HOLD else None
        if target is None:
            continue
        try:
            result = target.add(candidate.text, candidate.kind, auto=True)
        except MemoryStoreError as exc:  # locked or corrupt: the compaction itself went fine
            return SaveResult(added, f"memories from the compaction not saved: {exc}", held)
        if not result.merged:
            (added if target is store else held).append(result.entry)
    return SaveResult(added, held=held)


def confirm_pending(store: MemoryStore, entry_id: str) -> list[Entry]:
    """The user's yes to held memories (an id, or "all"): the entries saved. MemoryStoreError
    when a store refuses (a held text is checked again: the secrets may have changed)."""
    pending = store.pending
    chosen = [e for e in pending.entries() if entry_id in ("all", e.id)] if pending is not None else []
    saved = []
    for entry in chosen:
        saved.append(store.add(entry.text, entry.kind, auto=True).entry)
        pending.forget(entry.id)
    return saved
