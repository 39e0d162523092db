"""The budget numbers (the one place that knows them), the settings for a model's window, and
the size of what is sent.

`size` is the sum over messages of each message's compact JSON serialisation: quotes, escapes
and keys included, because that is what the model is sent and paid for on every request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
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
# Layer (a): one tool result, in UTF-8 bytes; ~17 % of the 120k-char session budget.
MAX_TOOL_RESULT_BYTES = 20_000
# The reply's max_tokens when nothing smaller is configured or needed.
DEFAULT_MAX_TOKENS = 4_096

# Compact when the prompt passes this share of what the window leaves after the reply:
# the estimate of appended messages can be off, and the next tool result lands before the
# next check.
TOKEN_TRIGGER_FRACTION = 0.75
# A reply rarely needs more than a quarter of a small window; reserving a 4,096-token
# max_tokens on an 8k local model would leave no room to work.
MAX_REPLY_SHARE = 0.25
# Chars per token assumed when turning a token window into a char budget: code and JSON
# (escaped quotes and newlines) run ~3, prose ~4; the lower figure errs towards fitting.
CONSERVATIVE_CHARS_PER_TOKEN = 3
# One tool result may take about this share of the window (20,000 bytes of 128k is ~4 %,
# but on an 8k model a 20 KB result alone would be most of the prompt).
TOOL_RESULT_WINDOW_SHARE = 0.15
MIN_TOOL_RESULT_BYTES = 1_000  # below this a result says too little to be useful


@dataclass(frozen=True)
class ContextSettings:
    """Every number the engine and its neighbours work to, as one value: computed once for a
    model's window (settings_for_window) and handed to whoever needs it."""

    budget_chars: int = CONTEXT_CHAR_BUDGET
    keep_recent: int = KEEP_RECENT
    placeholder_min_chars: int = PLACEHOLDER_MIN_CHARS
    compact_to: float = COMPACT_TO_FRACTION
    tool_result_bytes: int = MAX_TOOL_RESULT_BYTES  # the clamp on one tool result
    max_tokens: int = DEFAULT_MAX_TOKENS  # sent with every request: the reply's reserve
    window: int | None = None  # the model's context window in tokens, when known
    token_limit: int | None = None  # compaction also triggers when the prompt passes this many tokens


def reply_reserve(context_window: int, max_output_tokens: int) -> int:
    """Tokens kept free for the reply (also the max_tokens worth sending)."""
    return max(1, min(max_output_tokens, int(context_window * MAX_REPLY_SHARE)))


def prompt_token_limit(context_window: int, max_output_tokens: int) -> int:
    """Compaction triggers when the estimated prompt exceeds this many tokens."""
    return int(TOKEN_TRIGGER_FRACTION * (context_window - reply_reserve(context_window, max_output_tokens)))


def settings_for_window(context_window: int | None, max_output_tokens: int = DEFAULT_MAX_TOKENS) -> ContextSettings:
    """The settings for a model's window in tokens (None: unknown, the defaults).

    The char budget is what fits in the token trigger's share of the window at a conservative
    3 chars/token, never above CONTEXT_CHAR_BUDGET (e.g. 8,192 tokens: 13,824 chars; 128k:
    120,000). The tool cap is ~15 % of the window at the same ratio, never above 20,000 bytes
    (8,192: 3,686 bytes; 32k and up: 14,745-20,000). max_tokens keeps at most a quarter of it."""
    if not context_window:
        return ContextSettings(max_tokens=max_output_tokens)
    limit = prompt_token_limit(context_window, max_output_tokens)
    tool_bytes = int(context_window * TOOL_RESULT_WINDOW_SHARE * CONSERVATIVE_CHARS_PER_TOKEN)
    return ContextSettings(
        budget_chars=min(CONTEXT_CHAR_BUDGET, limit * CONSERVATIVE_CHARS_PER_TOKEN),
        tool_result_bytes=max(MIN_TOOL_RESULT_BYTES, min(MAX_TOOL_RESULT_BYTES, tool_bytes)),
        max_tokens=reply_reserve(context_window, max_output_tokens),
        window=context_window,
        token_limit=limit,
    )


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
