"""The two calls the agent makes into memory: a user message's block, and a compaction's
candidates saved. A broken memory file gives a warning, never an exception."""

import pytest

from nanohermes.memory.block import BLOCK_START
from nanohermes.memory.candidates import Candidate
from nanohermes.memory.entry_points import SaveResult, block_for, save_candidates
from nanohermes.memory.store import MemoryStore

CORRUPT = b'{"entries": [oops'


@pytest.fixture
def store(isolated_home) -> MemoryStore:
    return MemoryStore.in_home(isolated_home)


def test_the_block_for_a_relevant_message_holds_the_entry_and_counts_its_use(store):
    store.add("The team deploys with Ansible playbooks.", "decision")
    block, warning = block_for(store, "how do we deploy with ansible?")
    assert warning is None and block.startswith(BLOCK_START)
    assert "- [decision] The team deploys with Ansible playbooks." in block
    assert store.entries()[0].uses == 1


def test_an_empty_or_unrelated_message_gets_no_block(store):
    store.add("The team deploys with Ansible playbooks.")
    assert block_for(store, "   ") == ("", None)
    assert block_for(store, "rename the helper in utils.py") == ("", None)
    assert store.entries()[0].uses == 0


def test_a_corrupt_memory_file_gives_a_warning_and_no_block(store):
    store.path.write_bytes(CORRUPT)
    block, warning = block_for(store, "deploy")
    assert block == "" and warning.startswith("memory not used: ") and "corrupt" in warning
    assert store.path.read_bytes() == CORRUPT


def test_new_candidates_are_saved_as_automatic_entries_and_near_duplicates_are_not_added(store):
    mine = store.add("The user prefers pytest with -x.", "preference").entry
    saved = save_candidates(
        store, [Candidate("fact", "the user prefers pytest with -x"), Candidate("fact", "It is a CLI.")]
    )
    assert saved.error is None and [(e.text, e.auto) for e in saved.added] == [("It is a CLI.", True)]
    assert store.entries() == [mine, saved.added[0]]


def test_no_candidates_touch_nothing(store):
    assert save_candidates(store, []) == SaveResult([], None)
    assert not store.path.exists()


def test_a_refused_candidate_stops_the_saving_and_keeps_what_came_before(store):
    saved = save_candidates(
        store, [Candidate("fact", "It is a CLI."), Candidate("gossip", "the build is slow"), Candidate("fact", "later")]
    )
    assert [e.text for e in saved.added] == ["It is a CLI."]
    assert saved.error.startswith("memories from the compaction not saved: unknown kind 'gossip'")
    assert [e.text for e in store.entries()] == ["It is a CLI."]


def test_a_corrupt_memory_file_is_reported_and_left_untouched(store):
    store.path.write_bytes(CORRUPT)
    saved = save_candidates(store, [Candidate("fact", "It is a CLI.")])
    assert saved.added == [] and "corrupt" in saved.error
    assert store.path.read_bytes() == CORRUPT
