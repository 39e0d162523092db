"""The memory block (pure): markers, the reference-only header, the char budget, and the user
message it travels with."""

from hypothesis import given, settings
from hypothesis import strategies as st

from nanohermes.memory.block import (
    BLOCK_END,
    BLOCK_HEADER,
    BLOCK_START,
    INJECT_CHAR_BUDGET,
    attach_block,
    entry_line,
    render_block,
)
from nanohermes.memory.entry import Entry
from tests.support.memories import entry

# ---- rendering (pure) ------------------------------------------------------------------------


def block_overhead() -> int:
    return len(render_block([entry("x")])) - len("\n" + entry_line(entry("x")))


def test_block_has_markers_and_the_reference_only_header():
    text = render_block([entry("use uv", kind="preference")])
    assert text == f"{BLOCK_START}\n{BLOCK_HEADER}\n- [preference] use uv\n{BLOCK_END}"
    assert "reference only" in BLOCK_HEADER and "current instruction wins" in BLOCK_HEADER


def test_empty_selection_renders_nothing():
    assert render_block([]) == ""


def test_block_at_the_char_budget_keeps_every_entry_and_one_over_drops_the_last():
    first = entry("a" * 300)
    room = INJECT_CHAR_BUDGET - block_overhead() - len("\n" + entry_line(first)) - len("\n- [fact] ")
    exact = render_block([first, entry("b" * room)])
    over = render_block([first, entry("b" * (room + 1))])
    assert len(exact) == INJECT_CHAR_BUDGET and "b" * room in exact
    assert "b" not in over.replace(BLOCK_HEADER, "") and len(over) < INJECT_CHAR_BUDGET


def test_block_stops_at_the_first_entry_that_does_not_fit():
    entries = [entry("most relevant"), entry("x" * INJECT_CHAR_BUDGET), entry("short but less relevant")]
    text = render_block(entries)
    assert "most relevant" in text
    assert "short but less relevant" not in text  # break, not continue


def test_block_never_exceeds_its_budget():
    for budget in (0, 50, 200, 1000):
        assert len(render_block([entry("w" * 90)] * 10, budget)) <= budget


def test_multi_line_entries_render_on_one_line():
    assert render_block([entry("line one\nline two")]).count("\n") == 3


# ---- the memory block, with the user message it was retrieved for ---------------------------


def block(*texts: str) -> str:
    return render_block(
        [Entry(f"id{i}", "fact", t, "2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z") for i, t in enumerate(texts)]
    )


def test_the_block_follows_the_users_own_words_which_stay_verbatim():
    text = "How do we deploy?"
    assert attach_block(text, block("uses ansible")) == text + "\n\n" + block("uses ansible")
    assert attach_block(text, "") == text


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=300), texts=st.lists(st.text(max_size=700), max_size=6))
def test_any_block_keeps_the_message_within_the_memory_budget(text, texts):
    message = attach_block(text, block(*texts))
    assert message.startswith(text)
    assert len(message) <= len(text) + 2 + INJECT_CHAR_BUDGET
