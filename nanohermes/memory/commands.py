"""/memory's words, for the REPL and an editor: list, add, forget, search, and the memories a
compaction held for the user's yes (pending, confirm, drop). Returns the text to print."""

from __future__ import annotations

from nanohermes.memory.entry import KINDS, Entry
from nanohermes.memory.entry_points import confirm_pending
from nanohermes.memory.store import MAX_ENTRIES, MemoryStore, MemoryStoreError

USAGE = (
    "usage: /memory [list [auto]] | /memory add [KIND:] TEXT | /memory forget ID|auto | /memory search QUERY\n"
    "       /memory pending | /memory confirm ID|all | /memory drop ID|all\n"
    f"kinds: {', '.join(KINDS)} (default fact); auto: the entries compactions saved from what they dropped; "
    "pending: what compactions found worth keeping when saving it needed your yes"
)
AUTO = "auto"


def _row(entry: Entry) -> str:
    kind = f"{entry.kind}, auto" if entry.auto else entry.kind
    return f"{entry.id}  [{kind}] {' '.join(entry.text.split())}  (used {entry.uses}×, {entry.updated[:10]})"


def _split_kind(text: str) -> tuple[str, str]:
    """`preference: use uv` → ("preference", "use uv"); anything else is a fact."""
    head, sep, rest = text.partition(":")
    if sep and head.strip().lower() in KINDS and rest.strip():
        return head.strip().lower(), rest.strip()
    return "fact", text


def _list(store: MemoryStore, arg: str = "") -> str:
    entries = store.entries()
    if arg == AUTO:
        automatic = [e for e in entries if e.auto]
        if not automatic:
            return "no automatic memories (compactions save them from the messages they drop)"
        return "\n".join([f"{len(automatic)} automatic of {len(entries)} memories:", *map(_row, automatic)])
    if arg:
        return USAGE
    if not entries:
        return "no memories yet (add one with /memory add TEXT)"
    return "\n".join([f"{len(entries)}/{MAX_ENTRIES} memories:", *map(_row, entries)])


def _add(store: MemoryStore, text: str) -> str:
    if not text:
        return USAGE
    kind, text = _split_kind(text)
    result = store.add(text, kind)
    line = ("updated " if result.merged else "added ") + _row(result.entry)
    if result.evicted is not None:
        line += f"\nmemory was full: forgot {_row(result.evicted)}"
    return line


def _forget(store: MemoryStore, entry_id: str) -> str:
    if not entry_id:
        return USAGE
    if entry_id == AUTO:
        removed = [store.forget(e.id) for e in store.entries() if e.auto]
        return f"forgot {len(removed)} automatic memor{'y' if len(removed) == 1 else 'ies'}"
    removed = store.forget(entry_id)
    return f"forgot {_row(removed)}" if removed else f"no memory with id {entry_id!r} (see /memory list)"


def _search(store: MemoryStore, query: str) -> str:
    if not query:
        return USAGE
    hits = store.search(query)
    if not hits:
        return f"no memory matches {query!r}"
    return "\n".join(f"{score:5.2f}  {_row(entry)}" for entry, score in hits)


def _pending(store: MemoryStore, arg: str = "") -> str:
    held = store.pending.entries() if store.pending is not None else []
    if arg:
        return USAGE
    if not held:
        return "no memories wait for your yes"
    return "\n".join(
        [f"{len(held)} waiting (/memory confirm ID|all keeps, /memory drop ID|all forgets):", *map(_row, held)]
    )


def _confirm(store: MemoryStore, entry_id: str) -> str:
    if not entry_id:
        return USAGE
    saved = confirm_pending(store, entry_id.lower())
    return "\n".join(f"kept {_row(e)}" for e in saved) if saved else f"no pending memory {entry_id!r} (/memory pending)"


def _drop(store: MemoryStore, entry_id: str) -> str:
    if not entry_id:
        return USAGE
    held = store.pending.entries() if store.pending is not None else []
    dropped = [store.pending.forget(e.id) for e in held if entry_id.lower() in ("all", e.id)]
    return f"dropped {len(dropped)} pending memor{'y' if len(dropped) == 1 else 'ies'}"


_SUBCOMMANDS = {
    "list": _list,
    "add": _add,
    "forget": _forget,
    "search": _search,
    "pending": _pending,
    "confirm": _confirm,
    "drop": _drop,
}


def memory_command(store: MemoryStore, arg: str) -> str:
    """Handle `/memory ARG`; no argument lists. Store errors come back as text, never raised."""
    name, _, rest = arg.strip().partition(" ")
    handler = _SUBCOMMANDS.get(name.lower() or "list")
    if handler is None:
        return USAGE
    try:
        return handler(store, rest.strip())
    except MemoryStoreError as exc:
        return f"error: {exc}"
