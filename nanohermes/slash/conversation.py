"""Slash commands about the conversation itself: /reset, /session, /compact and /context (with
`summary`: the summary that stands in for the compacted messages). `context_parts` is pure: the
sizes of what the next request holds, part by part."""

from __future__ import annotations

import json

from nanohermes.context import message_size, size_by_kind
from nanohermes.cost import cost_text, dollars
from nanohermes.memory.block import BLOCK_END, BLOCK_START
from nanohermes.slash.outcome import ASIDE, QUIET, STRONG, WARNING, Outcome, Parts, Text, said

# What the next request holds, in the order /context shows it.
PART_NAMES = (
    "built-in rules",
    "project guidance",
    "skills listing",
    "memory block",
    "tool schemas",
    "summary",
    "user",
    "loop notes",  # what the loop told the model (a nudge), in the user role
    "assistant",
    "tool calls",
    "tool results",
)
RESET = 'conversation reset (project guidance re-read, this session\'s answers cleared; "always" ones stay)'


def reset(runtime, arg: str = "") -> Outcome:
    runtime.reset()
    return said(Text(RESET))


def session(runtime, arg: str = "") -> Outcome:
    s = runtime.session
    in_context = len(runtime.agent.messages) - 1
    return said(
        Text(f"session {s.name}\n  path {s.path}\n  size {s.size_bytes():,} bytes, {in_context} messages in context")
    )


def compact(runtime, arg: str) -> Outcome:
    """Summarise now; the report's one line (the words of the loop's own notice), or why nothing was done."""
    report = runtime.agent.fit_context(force=True, focus=arg or None)
    if report is not None and report.layers:
        return said(Text(report.one_line(), WARNING if report.over_budget or report.thrash_skipped else ASIDE))
    if report is not None and report.notices:
        return said(Text(report.one_line(), ASIDE))  # "context not compacted; why"
    return said(Text("nothing to compact", ASIDE))


def context(runtime, arg: str) -> Outcome:
    """What the next request holds, part by part, in tokens (chars beside them), against the window
    or the context limit; then the last request and what the session has cost."""
    if arg == "summary":
        return _summary(runtime.agent.messages)
    if arg:
        return said(
            Text("/context shows the parts of the next request; /context summary the compaction summary", QUIET)
        )
    from nanohermes.context.tokens import count_tokens

    inputs, agent = runtime.prompt.inputs, runtime.agent
    sections = {
        "project guidance": len(inputs.project_guidance) + len(inputs.nanohermes_md),
        "skills listing": len(inputs.skills_listing),
    }
    chars = context_parts(sections, agent.messages, agent.tool_schemas())
    sample = json.dumps(agent.messages, ensure_ascii=False)  # the request's own chars-per-token ratio
    ratio = count_tokens(sample) / max(1, len(sample))
    tokens = {name: round(n * ratio) for name, n in chars.items()}
    budget = agent.settings.high_water_chars  # compaction starts here
    if agent.settings.window:
        limit, label = agent.settings.window, f"the {agent.settings.window:,}-token window"
    else:
        limit = round(budget * ratio)
        label = f"the context limit: {budget:,} chars ≈ {limit:,} tokens"  # where compaction starts
    status = agent.context_status()
    last = last_request_line(status.last_usage)
    spent = f"session so far: {cost_text(status.spent)} (/cost for the prices)" if status.spent else ""
    return said(Parts(chars, tokens, limit, label), *(Text(line, QUIET) for line in (last, spent) if line))


def _summary(messages: list[dict]) -> Outcome:
    """The summary that stands in for the messages a compaction summarised, as the model reads it."""
    from nanohermes.context.summary import find_summary, summary_text

    at = find_summary(messages)
    if at is None:
        return said(
            Text("no summary: nothing in this conversation has been summarised yet (/compact summarises now)", QUIET)
        )
    text = summary_text(messages[at])
    lines = "\n".join("  " + line for line in text.splitlines())
    return said(Text("summary of the earlier conversation, as the model reads it:", STRONG), Text(lines))


def last_request_line(usage: dict) -> str:
    """`last request: 12,400 tokens in (91 % cached), $0.0012; 3,100 of 48,000 chars new since the one before`."""
    if not usage:
        return ""
    line = "last request:"
    if usage.get("prompt_tokens"):
        line += f" {usage['prompt_tokens']:,} tokens in"
        if usage.get("cached_tokens") is not None:
            line += f" ({100 * usage['cached_tokens'] / usage['prompt_tokens']:.0f} % cached)"
        cost = usage.get("cost_usd")
        line += f", {'cost unknown' if cost is None else dollars(cost)};"
    return line + f" {usage['uncached_chars']:,} of {usage['sent_chars']:,} chars new since the one before"


def context_parts(system_sections: dict[str, int], messages: list[dict], tool_schemas: list[dict]) -> dict[str, int]:
    """Chars per part of the next request. `system_sections` splits messages[0] by source; the
    memory blocks are counted out of the user messages they travel with."""
    kinds = size_by_kind(messages)
    system_total = message_size(messages[0]) if messages else 0
    memory = sum(_memory_chars(m) for m in messages if m.get("role") == "user")
    parts = dict(system_sections)
    parts["built-in rules"] = max(0, system_total - sum(system_sections.values()))
    parts["tool schemas"] = len(json.dumps(tool_schemas, ensure_ascii=False, separators=(",", ":")))
    parts.update(
        {
            "memory block": memory,
            "summary": kinds["summary"],
            "user": kinds["user"] - memory,
            "loop notes": kinds["notes"],
            "assistant": kinds["assistant"],
            "tool calls": kinds["tool_calls"],
            "tool results": kinds["tool"],
        }
    )
    return {name: parts.get(name, 0) for name in PART_NAMES}


def _memory_chars(message: dict) -> int:
    content = message.get("content")
    at = content.rfind(BLOCK_START) if isinstance(content, str) else -1
    return len(content) - at if at >= 0 and content.endswith(BLOCK_END) else 0
