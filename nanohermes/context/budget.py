"""The budget numbers (the one place that knows them) and the size of what is sent.

`size` is the sum over messages of each message's compact JSON serialisation: quotes, escapes
and keys included, because that is what the model is sent and paid for on every request.
"""

from __future__ import annotations

import json
from typing import Callable, Iterable

# A conservative session size: ~30-40k tokens of English and code, well inside every
# mainstream window, and small enough that resending it every turn stays cheap.
CONTEXT_CHAR_BUDGET = 120_000
# Messages, not turns: one turn with a 5-call fan-out is 7 messages, so "10 turns" could mean
# 110 messages; 10 messages always covers the latest complete tool round trip.
KEEP_RECENT = 10
# ~1,500-2,500 chars: 1-2 % of the budget. A longer summary is just another bloat.
SUMMARY_MAX_WORDS = 300
# Hard cap on what a summariser may put back (300 words is asked for; a rambling model must
# not undo the compaction). Generous so a CJK or code-heavy summary is not cut.
SUMMARY_MAX_CHARS = 4_000
# Tool results shorter than this stay verbatim outside the tail: a placeholder line costs
# ~250 chars, so replacing a small result saves little and loses its exact text.
PLACEHOLDER_MIN_CHARS = 1_000
# Once the budget is exceeded, placeholders alone must bring the size under this share of
# it, or a summary follows: a compaction that leaves 99 % of the budget fires again on the
# next step, rewriting the prompt prefix (and busting the provider's prompt cache) every turn.
COMPACT_TO_FRACTION = 0.6
# Anti-thrash: an automatic compaction that frees less than this is "small".
MIN_USEFUL_SAVING = 0.10
# Layer (d) never trims a message below this many chars of content: head and tail must
# still say what the message was.
TRIM_MIN_KEEP_CHARS = 800


def message_size(message: dict) -> int:
    """Length of the message as the OpenAI SDK puts it on the wire.

    ensure_ascii=False because the SDK serialises requests exactly so (openai._utils._json:
    `ensure_ascii=False, separators=(",", ":")`): "counts what is sent" then holds literally.
    With ensure_ascii=True a CJK character would count 6 chars and an emoji 12 while costing
    ~1 token, so the budget would fire far too early for Chinese users. The opposite blind
    spot (a CJK char is ~1 token, not 1/4) is covered by the token trigger (tokens.py).
    """
    return len(json.dumps(message, ensure_ascii=False, separators=(",", ":")))


class SizeCache:
    """Per-message sizes (chars by default; any `measure`) keyed by identity, so a check at a
    full context costs microseconds.

    A hit needs the same dict object holding the same `content` and `tool_calls` objects:
    strings are immutable, so replacing a message's content (as every layer here does, by
    building a new dict) or mutating it in place (assigning a new string) is always seen.
    Mutating a tool_calls list in place without replacing it is not seen; nothing does that.
    """

    def __init__(self, measure: Callable[[dict], int] = message_size) -> None:
        self._measure = measure
        self._entries: dict[int, tuple[dict, object, object, int]] = {}

    def size(self, message: dict) -> int:
        entry = self._entries.get(id(message))
        content, calls = message.get("content"), message.get("tool_calls")
        if entry is not None and entry[0] is message and entry[1] is content and entry[2] is calls:
            return entry[3]
        n = self._measure(message)
        self._entries[id(message)] = (message, content, calls, n)
        return n

    def total(self, messages: Iterable[dict]) -> int:
        return sum(self.size(m) for m in messages)

    def forget_all_but(self, messages: list[dict]) -> None:
        """Drop entries for messages no longer in the working set (they hold references)."""
        if len(self._entries) > 2 * len(messages) + 64:
            keep = {id(m) for m in messages}
            self._entries = {k: v for k, v in self._entries.items() if k in keep}


def total_size(messages: Iterable[dict]) -> int:
    """Uncached size of a message list; use SizeCache.total on the hot path."""
    return sum(message_size(m) for m in messages)


def size_by_kind(messages: list[dict]) -> dict[str, int]:
    """Chars per kind of content (for /context): system, summary, user, assistant, tool_calls, tool."""
    from nanohermes.context.summary_message import is_summary_message

    kinds = dict.fromkeys(("system", "summary", "user", "assistant", "tool_calls", "tool"), 0)
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "system":
            kinds["summary" if i > 0 and is_summary_message(m) else "system"] += message_size(m)
        elif role == "assistant" and m.get("tool_calls"):
            calls = message_size({"tool_calls": m["tool_calls"]})
            kinds["tool_calls"] += calls
            kinds["assistant"] += message_size(m) - calls
        elif role in kinds:
            kinds[role] += message_size(m)
    return kinds
