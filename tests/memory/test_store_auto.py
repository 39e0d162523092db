"""Automatic memories (saved by compactions): marked, never rewriting what memory holds, evicted
first, and a file without them unchanged in format (/memory lists and forgets them: tests/ui)."""

import json

import pytest

from nanohermes.memory.entry import Entry
from nanohermes.memory.store import MAX_ENTRIES, MemoryStore
from tests.support.memories import entry, write_entries


@pytest.fixture
def store(isolated_home) -> MemoryStore:
    return MemoryStore.in_home(isolated_home)


def test_an_automatic_entry_is_marked_and_survives_a_fresh_store(store, isolated_home):
    added = store.add("The user wants uv, never pip.", "preference", auto=True)
    assert added.entry.auto and not added.merged
    assert MemoryStore.in_home(isolated_home).entries() == [added.entry]


def test_an_automatic_entry_never_rewrites_a_near_duplicate_memory_holds(store):
    mine = store.add("the user prefers pytest with -x", "preference").entry
    again = store.add("The user prefers pytest with -x.", "fact", auto=True)
    assert again.merged and again.entry == mine
    assert store.entries() == [mine]


def test_automatic_entries_are_evicted_before_the_users_own(store):
    entries = [entry(f"topic{i} detail{i} remark{i}", id=f"id{i:03d}", uses=0) for i in range(MAX_ENTRIES)]
    entries[42] = Entry(
        "auto1", "fact", "found by a compaction", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", uses=3, auto=True
    )
    write_entries(store.path, entries)
    assert store.add("a brand new fact").evicted.id == "auto1"


def test_a_file_without_automatic_entries_holds_no_auto_field(store):
    store.add("plain fact")
    store.add("found later", auto=True)
    rows = json.loads(store.path.read_text())["entries"]
    assert "auto" not in rows[0] and rows[1]["auto"] is True
