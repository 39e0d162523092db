"""The memory store: memory.json written privately and atomically under a lock, near-duplicates
merged, the least useful evicted when full, a corrupt file never overwritten."""

import json
import multiprocessing
import stat
from pathlib import Path

import pytest

from nanohermes.memory.commands import memory_command
from nanohermes.memory.entry import MAX_ENTRY_CHARS
from nanohermes.memory.store import INJECT_TOP_K, MAX_ENTRIES, MemoryStore, MemoryStoreError
from tests.support.memories import entry, write_entries


@pytest.fixture
def store(isolated_home) -> MemoryStore:
    return MemoryStore.in_home(isolated_home)


def test_add_then_fresh_store_sees_it(store, isolated_home):
    result = store.add("The user prefers pytest.", "preference")
    reloaded = MemoryStore.in_home(isolated_home).entries()
    assert [(e.id, e.kind, e.text) for e in reloaded] == [(result.entry.id, "preference", "The user prefers pytest.")]
    assert len(result.entry.id) == 6 and not result.merged


def test_near_duplicate_is_merged_keeping_the_id(store):
    first = store.add("The user prefers pytest.")
    second = store.add("user prefers PYTEST", "preference")
    assert second.merged and second.entry.id == first.entry.id
    assert [(e.text, e.kind) for e in store.entries()] == [("user prefers PYTEST", "preference")]


def test_different_facts_are_not_merged(store):
    store.add("Use tabs in Makefiles")
    store.add("Never use tabs in Makefiles")
    assert len(store.entries()) == 2


def test_entry_at_400_chars_is_stored_and_401_refused(store):
    store.add("a" * MAX_ENTRY_CHARS)
    with pytest.raises(MemoryStoreError, match=f"401 chars; a memory holds at most {MAX_ENTRY_CHARS}"):
        store.add("b" * (MAX_ENTRY_CHARS + 1))
    assert [len(e.text) for e in store.entries()] == [MAX_ENTRY_CHARS]


def test_empty_text_and_unknown_kind_are_refused(store):
    with pytest.raises(MemoryStoreError, match="empty"):
        store.add("   ")
    with pytest.raises(MemoryStoreError, match="preference, fact, decision, note"):
        store.add("something", "gossip")


def test_full_store_evicts_the_least_useful_entry(store):
    entries = [entry(f"topic{i} detail{i} remark{i}", id=f"id{i:03d}", uses=1) for i in range(MAX_ENTRIES)]
    entries[7] = entry("never used older", id="old", uses=0, updated="2024-01-01T00:00:00Z")
    entries[9] = entry("never used newer", id="new", uses=0)
    write_entries(store.path, entries)

    result = store.add("a brand new fact")

    kept = store.entries()
    assert len(kept) == MAX_ENTRIES
    assert result.evicted is not None and result.evicted.id == "old"
    assert "old" not in {e.id for e in kept} and result.entry.id in {e.id for e in kept}


def test_store_below_the_cap_evicts_nothing(store):
    write_entries(store.path, [entry(f"topic{i} detail{i}", id=f"id{i}") for i in range(MAX_ENTRIES - 1)])
    assert store.add("the five hundredth fact").evicted is None
    assert len(store.entries()) == MAX_ENTRIES


def test_memory_file_is_private_and_written_atomically(store, isolated_home):
    store.add("private-ish preference", "preference")
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    lock = Path(f"{store.path}.lock")
    assert not lock.exists() or stat.S_IMODE(lock.stat().st_mode) == 0o600
    assert sorted(p.name for p in isolated_home.iterdir() if p.name.endswith(".tmp")) == []
    assert json.loads(store.path.read_text())["version"] == 1


def _add_many(home: str, prefix: str, count: int) -> None:
    store = MemoryStore.in_home(Path(home))
    for i in range(count):
        store.add(f"{prefix}{i} distinct{prefix}{i} remark{prefix}{i}")


def test_two_processes_adding_at_once_lose_nothing(isolated_home):
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_add_many, args=(str(isolated_home), p, 25)) for p in ("alpha", "beta")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert [w.exitcode for w in workers] == [0, 0]
    assert len(MemoryStore.in_home(isolated_home).entries()) == 50


def test_corrupt_file_is_never_overwritten(store):
    store.path.write_bytes(b'{"entries": [oops')
    for action in (lambda: store.add("new fact"), lambda: store.select_for_prompt("fact"), lambda: store.forget("abc")):
        with pytest.raises(MemoryStoreError, match=r"corrupt.*left untouched"):
            action()
    assert memory_command(store, "add new fact").startswith("error: ")
    assert store.path.read_bytes() == b'{"entries": [oops'


def test_wrong_shape_counts_as_corrupt(store):
    store.path.write_text('{"entries": [{"id": 1}]}')
    with pytest.raises(MemoryStoreError, match="corrupt"):
        store.entries()


def test_forget_removes_only_that_entry_and_ids_stay_stable(store):
    a, b = store.add("alpha fact").entry, store.add("beta fact").entry
    assert store.forget(a.id) == a
    assert [e.id for e in store.entries()] == [b.id]
    assert store.forget("nope") is None


def test_select_for_prompt_returns_at_most_four_relevant_entries(store):
    write_entries(
        store.path,
        [entry(f"pytest note number{i}", id=f"p{i}") for i in range(INJECT_TOP_K + 2)]
        + [entry("deploy with ansible", id="d")],
    )
    assert len(store.select_for_prompt("pytest")) == INJECT_TOP_K
    assert [e.id for e in store.select_for_prompt("ansible")] == ["d"]
    assert store.select_for_prompt("weather in Paris") == []


def test_exactly_four_relevant_entries_are_all_selected(store):
    write_entries(store.path, [entry(f"pytest note number{i}", id=f"p{i}") for i in range(INJECT_TOP_K)])
    assert len(store.select_for_prompt("pytest")) == INJECT_TOP_K


def test_selection_counts_uses_unless_asked_not_to(store, isolated_home):
    kept = store.add("prefers pytest").entry
    store.select_for_prompt("pytest")
    store.select_for_prompt("pytest", record_use=False)
    assert MemoryStore.in_home(isolated_home).entries()[0].uses == 1
    assert store.entries()[0].id == kept.id


def test_store_sees_writes_from_another_store(isolated_home):
    one, two = MemoryStore.in_home(isolated_home), MemoryStore.in_home(isolated_home)
    assert one.select_for_prompt("pytest") == []
    two.add("prefers pytest")
    assert [e.text for e in one.select_for_prompt("pytest")] == ["prefers pytest"]
