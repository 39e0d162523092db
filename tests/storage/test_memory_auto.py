"""Automatic memories (saved by compactions): marked, never rewriting what memory holds, evicted
first, listed and forgotten with /memory, and a file without them unchanged in format."""

import json

import pytest

from nanohermes.storage.memory import MAX_ENTRIES, Entry, MemoryStore
from nanohermes.ui.memory_commands import memory_command
from tests.storage.test_memory import entry, write_entries


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


def test_memory_command_lists_and_forgets_the_automatic_entries(store):
    store.add("mine to keep")
    auto = store.add("The user wants uv, never pip.", "preference", auto=True).entry
    listing = memory_command(store, "list")
    assert (
        "[fact] mine to keep" in listing and f"{auto.id}  [preference, auto] The user wants uv, never pip." in listing
    )
    only = memory_command(store, "list auto").splitlines()
    assert only[0] == "1 automatic of 2 memories:" and len(only) == 2
    assert memory_command(store, "forget auto") == "forgot 1 automatic memory"
    assert [e.text for e in store.entries()] == ["mine to keep"]
    assert memory_command(store, "list auto").startswith("no automatic memories")
