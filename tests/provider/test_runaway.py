"""Runaway replies: a passage repeated in a loop, a tool call written as text (provider/runaway.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from nanohermes.provider.runaway import REPEATS, find_repetition, tool_call_in_text

# Text that never repeats itself: distinct numbers (so any 100-char window occurs once).
unique_text = st.lists(st.integers(0, 10**9), unique=True, min_size=0, max_size=200).map(
    lambda ns: " ".join(map(str, ns))
)
block = st.lists(st.integers(10**6, 10**9), unique=True, min_size=15, max_size=80).map(
    lambda ns: "§ " + " ".join(map(str, ns)) + "\n"
)


@settings(max_examples=150, deadline=None)
@given(prefix=st.text(max_size=300), passage=block, repeats=st.integers(REPEATS, 8), partial=st.floats(0, 0.99))
def test_a_passage_repeated_three_or_more_times_is_found_and_one_copy_kept(prefix, passage, repeats, partial):
    text = prefix + passage * repeats + passage[: int(len(passage) * partial)]
    found = find_repetition(text)
    assert found is not None
    kept = text[: found.keep]
    assert kept.endswith(passage)  # one whole copy, up to its line break
    assert kept.count(passage) <= 1 + prefix.count(passage)  # no second copy kept
    assert len(kept) <= len(prefix) + len(passage)
    assert find_repetition(kept) is None  # what is kept does not loop


@settings(max_examples=150, deadline=None)
@given(prefix=unique_text, passage=block, suffix=unique_text)
def test_a_passage_said_twice_is_no_loop(prefix, passage, suffix):
    assert find_repetition(prefix + " " + passage * 2) is None
    assert find_repetition(prefix + passage * 2 + suffix) is None


@settings(max_examples=100, deadline=None)
@given(text=unique_text)
def test_text_that_does_not_repeat_is_never_cut(text):
    assert find_repetition(text) is None


def test_short_repeats_are_text_not_a_loop():
    rows = "".join(f"| {i} | ok |\n" for i in range(50))  # table rows: alike, not the same
    assert find_repetition(rows) is None
    assert find_repetition("ab" * 40) is None  # under three times 100 chars


def test_the_loop_of_the_issue_is_cut_to_one_paragraph():
    paragraph = (
        "The tests fail because `parse_port` returns a string. To fix it, convert the value with int() "
        "before returning it, then run the tests again.\n\n"
    )
    text = "I ran pytest.\n\n" + paragraph * 7
    found = find_repetition(text)
    assert text[: found.keep] == "I ran pytest.\n\n" + paragraph


def test_a_tool_call_written_as_text_is_recognised_only_for_offered_tools():
    tools = ["read_file", "grep"]
    assert tool_call_in_text('```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```', tools) == "read_file"
    assert (
        tool_call_in_text('<tool_call>\n{"name": "grep", "arguments": {"pattern": "x"}}\n</tool_call>', tools) == "grep"
    )
    assert tool_call_in_text('{"name": "get_weather", "arguments": {}}', tools) is None
    assert tool_call_in_text("Use read_file to read it, or grep for the name.", tools) is None
    assert tool_call_in_text('{"name": "Ada", "age": 3}', tools) is None
