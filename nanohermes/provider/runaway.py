"""Replies that run away: a streamed reply that repeats one passage, and a tool call written as text.

Asked to run the tests and fix the cause, Qwen2.5-Coder-1.5B ran pytest and then streamed the
same paragraph seven times for 299 s. Once a reply ends in the same block three times over,
nothing new is coming: the stream is stopped, one copy is kept and the loop tells the model why
(loop/agent.py). Small models also write a call as text (`{"name": "read_file", "arguments":
…}`) where the server did not turn it into a call; that text runs nothing. Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MIN_BLOCK_CHARS = 100  # shorter repeats are list items, table rows, "---" lines: text, not a loop
REPEATS = 3  # twice can be an honest restatement; three times in a row is a loop
CHECK_EVERY_CHARS = 64  # the stream looks for a loop this often (each look is a few substring searches)


@dataclass(frozen=True)
class Repetition:
    keep: int  # chars of the text to keep: everything before the loop and one copy of the block
    period: int  # the block's length


def find_repetition(text: str, min_block: int = MIN_BLOCK_CHARS, repeats: int = REPEATS) -> Repetition | None:
    """Whether `text` ends in one block of at least `min_block` chars repeated `repeats` times in a
    row (the last copy may be cut short only after the full repeats); the shortest such block.

    A loop's tail is periodic: its last `min_block` chars also occur exactly one period earlier.
    So the candidate periods are where those chars occur before (rare in text that does not
    repeat), and each is checked by one comparison."""
    n = len(text)
    if n < min_block * repeats:
        return None
    probe = text[n - min_block :]
    low = max(0, n - min_block - n // repeats)  # a period longer than n / repeats cannot repeat enough
    high = n - min_block  # occurrences ending here or before: periods of at least min_block
    while (at := text.rfind(probe, low, high)) >= 0:
        period = n - min_block - at
        if text[n - (repeats - 1) * period :] == text[n - repeats * period : n - period]:
            start = n - repeats * period
            while start > 0 and text[start - 1] == text[start - 1 + period]:
                start -= 1  # where the loop began: keep the first copy from there
            return Repetition(_to_line_end(text, start + period, period), period)
        high = at + min_block - 1  # the next occurrence to the left
    return None


def _to_line_end(text: str, keep: int, period: int) -> int:
    """A loop found from its start may begin a few chars early (the text before it ended as the
    block does): keep the copy up to its line break, as it was written."""
    if text[keep - 1] == "\n":
        return keep
    end = text.find("\n", keep, keep + period)
    if end < 0:
        return keep
    while end < len(text) and text[end] == "\n":
        end += 1
    return end


# `{"name": "read_file", "arguments": …}` (Qwen, Hermes, Llama) or `<tool_call>` / `<function=…>` tags.
_CALL_JSON = re.compile(r'\{\s*"name"\s*:\s*"([A-Za-z_][\w.-]*)"\s*,\s*"(?:arguments|parameters)"\s*:')
_CALL_TAG = re.compile(r"<tool_call>\s*\{?\s*(?:\"name\"\s*:\s*\")?([A-Za-z_][\w.-]*)|<function=([A-Za-z_][\w.-]*)>")


def tool_call_in_text(text: str, tool_names) -> str | None:
    """The name of a tool the text writes a call to instead of calling it, or None. Only names
    of offered tools count: a JSON example in an answer about some other API is not a call."""
    names = set(tool_names)
    for match in (*_CALL_JSON.finditer(text), *_CALL_TAG.finditer(text)):
        name = next((g for g in match.groups() if g), None)
        if name in names:
            return name
    return None
