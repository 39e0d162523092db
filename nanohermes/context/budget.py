"""The budget numbers (the one place that knows them), the settings for a model's window, and
the size of what is sent.

`size` is the sum over messages of each message's compact JSON serialisation: quotes, escapes
and keys included, because that is what the model is sent and paid for on every request.

What a user pays for under prompt caching is what a request does not share as a prefix with
the previous one. Between two compactions requests only append, so everything but the new
messages is cached; a compaction rewrites all after the system message and tools. So the
context grows to a high-water mark near the window and a compaction cuts it deeply, to a
low-water mark: each rewrite is paid rarely and is small.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from nanohermes.context.images import IMAGES, chars_of
from nanohermes.synthetic import untagged

# The high-water mark in chars when the model's window is unknown, and never more for any
# window: ~30-40k tokens of English and code. Past that, even cached tokens cost money and
# time on every request, and a server without a cache pays for all of them.
CONTEXT_CHAR_BUDGET = 120_000
# With a known window, compact when the prompt passes this share of what the window leaves
# after the reply reserve. The trigger is the provider's last prompt_tokens plus an estimate
# of what was appended since; the estimate covers at most one tool round (<= 15 % of the
# window) and is off by well under a fifth of that, so 90 % never reaches the window.
HIGH_WATER = 0.90
# A compaction brings the context down to at most this share of the high-water mark.
# Between the marks requests only append; each compaction re-sends (uncached) what it keeps,
# so the cost of compacting over the floor is about LOW / (1 - LOW). Measured with
# scripts/bench_cache.py: keeping more recent messages than this bought no retention and
# cost cache; keeping less left too little of the recent work verbatim.
LOW_WATER = 0.30
# ~1,500-2,500 chars. A longer summary is just another bloat.
SUMMARY_MAX_WORDS = 300
# Hard cap on what a summariser may put back (300 words is asked for; a rambling model must
# not undo the compaction). Generous so a CJK or code-heavy summary is not cut.
SUMMARY_MAX_CHARS = 4_000
# What a summary message usually costs (300 words, framing and file ledger).
SUMMARY_TYPICAL_CHARS = 2_500
# Where no layer reaches the low-water mark (small windows), clearing old outputs is preferred
# to a summary when it leaves at most this much more than the summary would: about fifteen
# placeholder lines cost less than a summary request, which on a one-slot local server is a
# generation of its own. Measured (bench_cache.py, 8K window, coding trajectory): summary
# requests 14 → 5 in 48 steps, uncached/floor 1.23 → 1.21 at 5,000; 8,000 since the fixed cost
# and the summary prompt got shorter (issue 27): summaries 6 → 4, 1.23 → 1.20; read25 1.10 → 1.05.
PLACEHOLDER_SLACK_CHARS = 8_000
# A summary reply's max_tokens: 300 words is ~400 tokens; room for a model that overshoots.
SUMMARY_REPLY_TOKENS = 800
# An excerpt for a separate summariser is at most half the high-water mark, never less than
# this: shorter says too little to summarise from.
EXCERPT_MIN_CHARS = 2_000
# Room kept for the summary message when choosing the kept tail: the summary's cap, its two
# file-ledger lines (700 chars each at most) and the framing, JSON escapes included.
SUMMARY_RESERVE_CHARS = 6_000
# Tool results shorter than this stay verbatim outside the tail: a placeholder line costs
# ~250 chars, so replacing a small result saves little and loses its exact text.
PLACEHOLDER_MIN_CHARS = 1_000
# Under LEAN_TOOLS_BELOW_TOKENS a window holds ~20,000 chars: what old rounds leave behind (call
# arguments, results of 500-1,000 chars) fills it and brings a summary a few rounds later. There a
# result from this size is cleared, and an old call's argument values are cut from this size (an
# edit's old and new text: the file on disk has them).
SMALL_WINDOW_CLEAR_CHARS = 500
SMALL_WINDOW_ARGUMENT_CHARS = 300
# Anti-thrash: an automatic compaction that frees less than this is "small".
MIN_USEFUL_SAVING = 0.10
# Messages the conversation must grow by before anti-thrash lets automatic compaction retry.
THRASH_RECOVERY_MESSAGES = 10
# Middle trim never cuts a message below this many chars of content: head and tail must
# still say what the message was.
TRIM_MIN_KEEP_CHARS = 800
# … unless the request would go over the window all the same (dense text: emoji, CJK, combining marks run
# near a token a char, so 800 chars can be 800 tokens): then as far down as this, the last resort.
TRIM_LAST_RESORT_KEEP_CHARS = 200
# Caps at the tool: one tool result, in UTF-8 bytes; ~17 % of the 120k-char budget.
MAX_TOOL_RESULT_BYTES = 20_000
# Images in one request at most; the oldest beyond it are cleared, a line each (context/images.py).
# Groq documents five images a request for its vision models, the fewest of the OpenAI-compatible
# services that take several (OpenAI takes hundreds, Anthropic a hundred); five screenshots are more
# than a coding turn looks at, and each is up to ~1,450 tokens resent with every request.
MAX_IMAGES_PER_REQUEST = 5
# The reply's max_tokens when nothing smaller is configured or needed.
DEFAULT_MAX_TOKENS = 4_096
# A reply rarely needs more than a quarter of a small window; reserving a 4,096-token
# max_tokens on an 8k local model would leave no room to work.
MAX_REPLY_SHARE = 0.25
# Chars per token assumed when turning a token window into a byte cap for one tool result:
# code and JSON (escaped quotes and newlines) run ~3, prose ~4; the lower figure errs towards fitting.
CONSERVATIVE_CHARS_PER_TOKEN = 3
# One tool result may take about this share of the window (20,000 bytes of 128k is ~4 %,
# but on an 8k model a 20 KB result alone would be most of the prompt).
TOOL_RESULT_WINDOW_SHARE = 0.15
MIN_TOOL_RESULT_BYTES = 1_000  # below this a result says too little to be useful
# Below this window the offered tools are the lean set (tools/__init__.py: Tool.lean): no
# background tasks, no helper agents, no `remember`. Every schema token is paid on every request, and the
# fixed cost (system + tools + workspace overview) must stay under 1,100 o200k tokens so an
# 8,192-token local model keeps most of its window; models that small rarely use those tools well.
LEAN_TOOLS_BELOW_TOKENS = 16_384


@dataclass(frozen=True)
class ContextSettings:
    """Every number the engine and its neighbours work to, as one value: computed once for a
    model's window (settings_for_window) and handed to whoever needs it."""

    high_water_chars: int = CONTEXT_CHAR_BUDGET  # compact when the messages pass this many chars...
    high_water_tokens: int | None = None  # ...or the prompt this many tokens (known window)
    low_water: float = LOW_WATER  # ...and bring them down to this share of the high-water mark
    placeholder_min_chars: int = PLACEHOLDER_MIN_CHARS
    tool_result_bytes: int = MAX_TOOL_RESULT_BYTES  # the clamp on one tool result
    max_tokens: int = DEFAULT_MAX_TOKENS  # sent with every request: the reply's reserve
    window: int | None = None  # the model's context window in tokens, when known
    summary_reuses_prefix: bool = True  # summary requests extend the conversation (same model)
    lean_tools: bool = False  # a small window: offer the lean tool set (LEAN_TOOLS_BELOW_TOKENS)

    @property
    def clear_chars(self) -> int:
        """Old results from this size become placeholders (a small window clears smaller ones)."""
        return (
            min(self.placeholder_min_chars, SMALL_WINDOW_CLEAR_CHARS) if self.lean_tools else self.placeholder_min_chars
        )

    @property
    def argument_chars(self) -> int:
        """Old calls' argument values from this size are cut to their head."""
        return (
            min(self.placeholder_min_chars, SMALL_WINDOW_ARGUMENT_CHARS)
            if self.lean_tools
            else self.placeholder_min_chars
        )

    @property
    def low_water_chars(self) -> int:
        return int(self.high_water_chars * self.low_water)

    @property
    def low_water_tokens(self) -> int | None:
        return int(self.high_water_tokens * self.low_water) if self.high_water_tokens else None


def reply_reserve(context_window: int, max_output_tokens: int) -> int:
    """Tokens kept free for the reply (also the max_tokens worth sending)."""
    return max(1, min(max_output_tokens, int(context_window * MAX_REPLY_SHARE)))


def prompt_token_limit(context_window: int, max_output_tokens: int) -> int:
    """The high-water mark in tokens: compaction triggers when the prompt passes it."""
    return int(HIGH_WATER * (context_window - reply_reserve(context_window, max_output_tokens)))


def settings_for_window(
    context_window: int | None, max_output_tokens: int = DEFAULT_MAX_TOKENS, summary_reuses_prefix: bool = True
) -> ContextSettings:
    """The settings for a model's window in tokens (None: unknown, the defaults).

    The token high-water mark is 90 % of the window after the reply reserve (8,192 tokens:
    5,529); the char mark stays at most 120,000. The tool cap is ~15 % of the window at 3
    chars/token, never above 20,000 bytes (8,192: 3,686 bytes; 32k and up: 14,745-20,000).
    max_tokens keeps at most a quarter of the window."""
    if not context_window:
        return ContextSettings(max_tokens=max_output_tokens, summary_reuses_prefix=summary_reuses_prefix)
    tool_bytes = int(context_window * TOOL_RESULT_WINDOW_SHARE * CONSERVATIVE_CHARS_PER_TOKEN)
    return ContextSettings(
        high_water_tokens=prompt_token_limit(context_window, max_output_tokens),
        tool_result_bytes=max(MIN_TOOL_RESULT_BYTES, min(MAX_TOOL_RESULT_BYTES, tool_bytes)),
        max_tokens=reply_reserve(context_window, max_output_tokens),
        window=context_window,
        summary_reuses_prefix=summary_reuses_prefix,
        lean_tools=context_window < LEAN_TOOLS_BELOW_TOKENS,
    )


def message_size(message: dict) -> int:
    """Length of the message as the OpenAI SDK puts it on the wire.

    ensure_ascii=False because the SDK serialises requests exactly so (openai._utils._json:
    `ensure_ascii=False, separators=(",", ":")`): "counts what is sent" then holds literally.
    With ensure_ascii=True a CJK character would count 6 chars and an emoji 12 while costing
    ~1 token, so the budget would fire far too early for Chinese users. The opposite blind
    spot (a CJK char is ~1 token, not 1/4) is covered by the token trigger (tokens.py).
    Images count by their tokens, never their base64 (context/images.py).
    """
    if IMAGES in message:
        rest = {k: v for k, v in message.items() if k != IMAGES}
        return len(json.dumps(untagged(rest), ensure_ascii=False, separators=(",", ":"))) + chars_of(message)
    return len(json.dumps(untagged(message), ensure_ascii=False, separators=(",", ":")))


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
