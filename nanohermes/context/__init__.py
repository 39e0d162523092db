"""The context engine: keeps what is sent to the model small, valid, high-signal and cheap.

Pure functions over plain OpenAI chat message dicts (no I/O), plus one small stateful class.
The layers, cheapest first: caps at the tool (the clamp), placeholders for old tool outputs,
a summary of everything before the kept tail, and a middle trim. The loop's side of it:

    engine = ContextEngine(settings_for_window(window, max_tokens))   # reset() on /reset
    tracker = PromptTokenTracker()
    messages, report = engine.fit(messages, summarize, token_estimate=tracker.estimate(messages, tools_tokens),
                                  fixed_tokens=tracker.fixed(tools_tokens))
    ...                                                                # send `messages` and the tools
    tracker.record_usage(usage["prompt_tokens"], sent_messages, tools_tokens)

`summarize(SummaryRequest) -> str` makes one request: the conversation's own prefix plus an
instruction (send it with the same tools, tool calls off), or a summary prompt and an excerpt.
"""

from nanohermes.context.budget import ContextSettings, message_size, settings_for_window
from nanohermes.context.cache import PrefixMeter
from nanohermes.context.engine import CompactionReport, ContextEngine
from nanohermes.context.sanitize import pairing_problems, sanitize_tool_pairs
from nanohermes.context.summary import SummaryRequest, is_summary_message, size_by_kind
from nanohermes.context.tokens import PromptTokenTracker, count_tokens

__all__ = [
    "CompactionReport",
    "ContextEngine",
    "ContextSettings",
    "PrefixMeter",
    "PromptTokenTracker",
    "SummaryRequest",
    "count_tokens",
    "is_summary_message",
    "message_size",
    "pairing_problems",
    "sanitize_tool_pairs",
    "settings_for_window",
    "size_by_kind",
]
