"""The memory store: $NANOHERMES_HOME/memory.json, its format, its lock, and MemoryStore,
which adds (merging near-duplicates, evicting the least useful), forgets and ranks with BM25
(ranking.py).

The core is pure (eviction choice, entry checks, parsing the file); MemoryStore is the only
part that touches the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from nanohermes.errors import NanoHermesError
from nanohermes.fileio import read_bounded
from nanohermes.memory.candidates import looks_secret
from nanohermes.memory.entry import KINDS, MAX_ENTRY_CHARS, Entry, normalised_text
from nanohermes.memory.ranking import Bm25Index, bm25_rank, build_index, is_near_duplicate, tokenize
from nanohermes.redact import NO_SECRETS, Redactor
from nanohermes.storage.locking import FileLock, LockTimeout, holding, replace_atomically

MAX_ENTRIES = 500  # a memory, not a database: ranking 500 short entries stays well under 2 ms
MAX_FILE_BYTES = 16 * 2**20  # 500 entries of at most MAX_ENTRY_CHARS, as JSON, with room; more is not ours
INJECT_TOP_K = 4  # only the few most relevant: every injected line is paid on every request
LOCK_TIMEOUT = 10.0  # seconds to wait for another NanoHermes process writing memory
USE_LOCK_TIMEOUT = 1.0  # use counts are a heuristic: skip one rather than stall a turn
FILE_VERSION = 1
PENDING_FILE = "memory-pending.json"  # what a compaction found worth keeping, waiting for the user's yes


class MemoryStoreError(NanoHermesError):
    """memory.json is corrupt, locked, or a request to it was invalid; the message says which."""


@dataclass(frozen=True)
class AddResult:
    entry: Entry
    merged: bool  # True: an existing near-duplicate was updated instead of adding a new entry
    evicted: Entry | None = None  # the least useful entry dropped to stay within MAX_ENTRIES


# ---- pure core -------------------------------------------------------------------------------


def find_near_duplicate(entries: Sequence[Entry], text: str) -> int | None:
    """Index of the entry `text` should merge into (the closest near-duplicate), or None."""
    target = set(tokenize(text))
    best, best_overlap = None, -1.0
    for i, entry in enumerate(entries):
        if not is_near_duplicate(entry.text, text):
            continue
        other = set(tokenize(entry.text))
        overlap = len(target & other) / len(target | other) if target | other else 1.0
        if overlap > best_overlap:
            best, best_overlap = i, overlap
    return best


def least_useful(entries: Sequence[Entry]) -> int:
    """Index of the entry to evict: automatic ones first, then fewest uses, then least recently
    updated, then oldest position."""
    return min(range(len(entries)), key=lambda i: (not entries[i].auto, entries[i].uses, entries[i].updated, i))


def new_entry_id(text: str, created: str, taken: set[str]) -> str:
    """Six hex chars, longer only on a clash; assigned once and never changed (merges keep it)."""
    digest = hashlib.sha1(f"{created}\0{text}".encode()).hexdigest()
    for size in range(6, len(digest) + 1):
        if digest[:size] not in taken:
            return digest[:size]
    raise MemoryStoreError("could not allocate a memory id")  # 40 hex chars all taken: impossible


SECRET_REFUSED = (
    "not remembered: {why}. Memory never keeps a secret (it would travel with every later session's "
    "prompt); the text was refused whole, not stored redacted."
)


def check_new_text(text: str, kind: str, redactor: Redactor = NO_SECRETS) -> tuple[str, str]:
    """The text (normalised: entry.normalised_text) and kind to store, or MemoryStoreError saying
    what to change. Secret-looking text is refused, never stored: redacted, what remained could
    still be half a key, and the model would remember a placeholder as a fact."""
    text, kind = normalised_text(text).strip(), kind.strip().lower()
    if (name := redactor.holds_secret(text)) is not None:
        raise MemoryStoreError(SECRET_REFUSED.format(why=f"it holds the value of {name}"))
    if looks_secret(text):
        raise MemoryStoreError(SECRET_REFUSED.format(why="it looks like a password, key or token"))
    if kind not in KINDS:
        raise MemoryStoreError(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}")
    if not text:
        raise MemoryStoreError("nothing to remember: the text is empty")
    if len(text) > MAX_ENTRY_CHARS:
        # Refused, not cut: the cut-off tail may be the part that matters ("... unless X").
        raise MemoryStoreError(
            f"text is {len(text)} chars; a memory holds at most {MAX_ENTRY_CHARS}. Say it shorter, "
            "or split it into separate facts."
        )
    return text, kind


def _utc_stamp(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def parse_memory_file(raw: bytes, path: Path) -> list[Entry]:
    """Entries from memory.json bytes, or MemoryStoreError (the caller never overwrites it)."""
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
            raise ValueError("expected an object with an 'entries' list")
        if data.get("version", FILE_VERSION) > FILE_VERSION:
            raise ValueError(f"version {data['version']} is newer than this NanoHermes understands")
        entries = [Entry(**item) for item in data["entries"]]
        for e in entries:
            if not all(isinstance(getattr(e, name), str) for name in ("id", "kind", "text", "created", "updated")):
                raise ValueError(f"entry {e.id!r} has a field of the wrong type")
            if not isinstance(e.uses, int) or not isinstance(e.auto, bool):
                raise ValueError(f"entry {e.id!r} has a non-integer use count or a non-boolean auto mark")
        return entries
    except (UnicodeDecodeError, ValueError, TypeError) as exc:
        raise MemoryStoreError(
            f"{path} is corrupt ({exc}). It was left untouched: fix it, or move it aside to start an empty memory."
        ) from None


# ---- the store (I/O) -------------------------------------------------------------------------


class MemoryStore:
    """memory.json: read without a lock (writes are atomic replaces), written under a file lock."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time, redactor: Redactor = NO_SECRETS):
        """`redactor`: the session's secrets, none of which is ever stored."""
        self.path, self.redactor = Path(path), redactor
        # The memories waiting for the user's yes (entry_points.save_candidates): a store of their
        # own, in the same format, never read into a prompt; None: nothing is held, only saved or dropped.
        self.pending: MemoryStore | None = None
        self._clock = clock
        self._lock = FileLock(f"{self.path}.lock")
        self._cache_key: tuple | None = None
        self._entries: list[Entry] = []
        self._index: Bm25Index | None = None

    @classmethod
    def in_home(cls, home: Path, redactor: Redactor = NO_SECRETS) -> MemoryStore:
        store = cls(Path(home) / "memory.json", redactor=redactor)
        store.pending = cls(Path(home) / PENDING_FILE, redactor=redactor)
        return store

    def entries(self) -> list[Entry]:
        return list(self._load())

    def add(self, text: str, kind: str = "fact", auto: bool = False) -> AddResult:
        """Store `text`, merging into a near-duplicate; when full, evict the least useful entry.
        An `auto` entry (a compaction's) never rewrites one memory already holds: that stays."""
        text, kind = check_new_text(text, kind, self.redactor)
        with self._locked(LOCK_TIMEOUT):
            entries = list(self._load())
            now = _utc_stamp(self._clock())
            dup = find_near_duplicate(entries, text)
            if dup is not None and auto:
                return AddResult(entries[dup], merged=True)
            if dup is not None:
                entry = replace(entries[dup], text=text, kind=kind, updated=now)
                entries[dup] = entry
                result = AddResult(entry, merged=True)
            else:
                entry = Entry(new_entry_id(text, now, {e.id for e in entries}), kind, text, now, now, auto=auto)
                evicted = entries.pop(least_useful(entries)) if len(entries) >= MAX_ENTRIES else None
                entries.append(entry)
                result = AddResult(entry, merged=False, evicted=evicted)
            self._save(entries)
        return result

    def forget(self, entry_id: str) -> Entry | None:
        """Remove the entry with this id; None when there is none."""
        with self._locked(LOCK_TIMEOUT):
            entries = list(self._load())
            for i, entry in enumerate(entries):
                if entry.id == entry_id.strip().lower():
                    del entries[i]
                    self._save(entries)
                    return entry
        return None

    def search(self, query: str, limit: int = 10) -> list[tuple[Entry, float]]:
        """Ranked matches for `query` (score > 0), without counting them as used."""
        entries, index = self._load(), self._ranking_index()
        return [(entries[i], score) for i, score in bm25_rank(index, tokenize(query), limit)]

    def select_for_prompt(self, query: str, *, record_use: bool = True) -> list[Entry]:
        """The INJECT_TOP_K entries most relevant to the user's message (score > 0), best first."""
        chosen = [entry for entry, _ in self.search(query, INJECT_TOP_K)]
        if record_use and chosen:
            self._record_uses({e.id for e in chosen})
        return chosen

    # -- internals --

    def _locked(self, timeout: float):
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise MemoryStoreError(f"cannot create {self.path.parent}: {exc.strerror}") from None
        return holding(self._lock, timeout, MemoryStoreError, self.path)

    def _record_uses(self, ids: set[str]) -> None:
        try:
            with self._locked(USE_LOCK_TIMEOUT):
                entries = [replace(e, uses=e.uses + 1) if e.id in ids else e for e in self._load()]
                self._save(entries)
        except MemoryStoreError as exc:
            if not isinstance(exc.__cause__, LockTimeout):
                raise

    def _load(self) -> list[Entry]:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._set_cache(None, [])
            return self._entries
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
        if key != self._cache_key:
            try:
                raw = read_bounded(self.path, MAX_FILE_BYTES)
            except OSError as exc:
                raise MemoryStoreError(f"cannot read {self.path}: {exc.strerror}") from None
            self._set_cache(key, parse_memory_file(raw, self.path))
        return self._entries

    def _ranking_index(self) -> Bm25Index:
        if self._index is None:
            self._index = build_index([tokenize(e.text) for e in self._entries])
        return self._index

    def _set_cache(self, key: tuple | None, entries: list[Entry]) -> None:
        # The index depends only on the texts: a use-count update must not pay for a rebuild.
        if [e.text for e in entries] != [e.text for e in self._entries]:
            self._index = None
        self._cache_key, self._entries = key, entries

    def _save(self, entries: list[Entry]) -> None:
        """Atomic: a temp file in the same directory, then os.replace."""
        # One entry per line: readable and diffable, and far cheaper than indent= on every turn.
        lines = ",\n".join(json.dumps(_stored(e), ensure_ascii=False) for e in entries)
        payload = f'{{"version": {FILE_VERSION}, "entries": [\n{lines}\n]}}\n'
        replace_atomically(self.path, payload.encode("utf-8"), ".memory.", MemoryStoreError)
        st = os.stat(self.path)
        self._set_cache((st.st_ino, st.st_mtime_ns, st.st_size), list(entries))


def _stored(entry: Entry) -> dict:
    """An entry as memory.json holds it: `auto` only when set, so a file without automatic
    entries stays readable by versions that do not know the mark."""
    return {k: v for k, v in vars(entry).items() if k != "auto" or v}
