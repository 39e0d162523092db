"""The context engine: keeps what is sent to the model small, valid and high-signal.

Pure functions over plain OpenAI chat message dicts (no I/O), plus one small stateful class.
The loop's side of it:

    engine = ContextEngine(budget_chars, keep_recent)      # one per conversation; reset() on /reset
    tracker = PromptTokenTracker()
    messages, report = engine.fit(messages, summarize, force=..., focus=...,
                                  token_estimate=tracker.estimate(messages),
                                  token_limit=prompt_token_limit(window, max_tokens))
    ...                                                    # send `messages`
    tracker.record_usage(usage["prompt_tokens"], sent_messages)

`summarize(system_prompt, user_text) -> str` makes one non-streaming, tool-less request.
"""

from nanohermes.context.budget import (
    CONTEXT_CHAR_BUDGET,
    KEEP_RECENT,
    MAX_TOOL_RESULT_BYTES,
    PLACEHOLDER_MIN_CHARS,
    SUMMARY_MAX_WORDS,
    ContextSettings,
    SizeCache,
    message_size,
    prompt_token_limit,
    reply_reserve,
    settings_for_window,
    size_by_kind,
    total_size,
)
from nanohermes.context.compaction import compact_history, cut_point, plan_cut, trim_to_budget
from nanohermes.context.digest import build_digest
from nanohermes.context.engine import CompactionReport, ContextEngine, Summarize, request_summary
from nanohermes.context.placeholders import placeholder_old_tool_outputs
from nanohermes.context.sanitize import MISSING_RESULT_STUB, pairing_problems, sanitize_tool_pairs
from nanohermes.context.summary_input import render_summary_input, summary_prompt
from nanohermes.context.summary_message import (
    OMITTED_HEADER,
    SUMMARY_HEADER,
    digest_message,
    is_summary_message,
    summary_message,
)
from nanohermes.context.tokens import PromptTokenTracker, count_tokens, estimate_tokens_by_ratio

__all__ = [
    "CONTEXT_CHAR_BUDGET",
    "KEEP_RECENT",
    "MISSING_RESULT_STUB",
    "OMITTED_HEADER",
    "PLACEHOLDER_MIN_CHARS",
    "SUMMARY_HEADER",
    "SUMMARY_MAX_WORDS",
    "CompactionReport",
    "ContextEngine",
    "PromptTokenTracker",
    "SizeCache",
    "Summarize",
    "settings_for_window",
    "ContextSettings",
    "MAX_TOOL_RESULT_BYTES",
    "build_digest",
    "compact_history",
    "count_tokens",
    "cut_point",
    "digest_message",
    "estimate_tokens_by_ratio",
    "is_summary_message",
    "message_size",
    "pairing_problems",
    "placeholder_old_tool_outputs",
    "plan_cut",
    "prompt_token_limit",
    "render_summary_input",
    "reply_reserve",
    "request_summary",
    "sanitize_tool_pairs",
    "size_by_kind",
    "summary_message",
    "summary_prompt",
    "total_size",
    "trim_to_budget",
]
