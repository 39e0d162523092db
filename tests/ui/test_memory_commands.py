"""/memory: list, add, forget and search, automatic entries included; store errors come back as
text."""

import pytest

from nanohermes.memory.commands import memory_command
from nanohermes.memory.store import MAX_ENTRIES, MemoryStore


@pytest.fixture
def store(isolated_home) -> MemoryStore:
    return MemoryStore.in_home(isolated_home)


def test_memory_command_add_list_search_forget(store):
    assert memory_command(store, "").startswith("no memories yet")
    added = memory_command(store, "add preference: answer in English")
    assert added.startswith("added ") and "[preference] answer in English" in added
    memory_command(store, "add builds use make")
    listing = memory_command(store, "list")
    assert listing.startswith(f"2/{MAX_ENTRIES} memories:") and "[fact] builds use make" in listing
    assert "answer in English" in memory_command(store, "search english answers please")
    assert memory_command(store, "search kubernetes").startswith("no memory matches")
    entry_id = store.entries()[0].id
    assert memory_command(store, f"forget {entry_id}").startswith("forgot ")
    assert "no memory with id" in memory_command(store, "forget zzz")
    assert memory_command(store, "frobnicate").startswith("usage:")
    assert memory_command(store, "add " + "y" * 401).startswith("error: text is 401 chars")


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
