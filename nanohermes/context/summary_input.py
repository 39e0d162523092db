"""What the summariser reads: the dropped messages as compact text, plus the previous summary.

Each message becomes `role: content`; each assistant tool call becomes `name(arguments)` (so
the summary knows which file was read or edited, which `role: content` alone would lose); long
tool results become a one-line description; other long texts keep their head and tail.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache

from nanohermes.context.budget import SUMMARY_MAX_WORDS
from nanohermes.calls import NO_FACTS, ResultFacts, describe_result, one_line, parse_tool_call, tool_calls_by_id
from nanohermes.context.summary_message import is_summary_message, summary_text
from nanohermes.text import head_tail_text

# Tool results up to this size are shown whole: short outputs ("edited x.py: 1 replacement",
# "exit code 0, 3 passed") are the facts a summary needs, and cost little.
TOOL_RESULT_INLINE_CHARS = 400
# User and assistant texts longer than this keep head and tail (Hermes: 4,000 + 1,500).
TEXT_MAX_CHARS = 5_500
# Tool-call argument values longer than this are cut (a write_file body is on disk).
ARGUMENT_VALUE_MAX_CHARS = 200


@cache
def summary_prompt(max_words: int = SUMMARY_MAX_WORDS) -> str:
    """The summariser's system prompt, from nanohermes/context/summary.md."""
    from importlib import resources  # ~3 ms, only when a summary is due

    template = resources.files("nanohermes.context").joinpath("summary.md").read_text(encoding="utf-8")
    return template.replace("{max_words}", str(max_words)).strip()


def _render_arguments(raw: str, arguments: dict) -> str:
    if not arguments:
        return one_line(raw, ARGUMENT_VALUE_MAX_CHARS) if raw.strip() not in ("", "{}") else ""
    short = {
        k: (head_tail_text(v, ARGUMENT_VALUE_MAX_CHARS) if isinstance(v, str) else v) for k, v in arguments.items()
    }
    return json.dumps(short, ensure_ascii=False)


def _render_message(message: dict, calls: dict, facts: Mapping[str, ResultFacts]) -> list[str]:
    role = str(message.get("role") or "?")
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    if role == "tool":
        call_id = str(message.get("tool_call_id"))
        call = calls.get(call_id)
        name = call.name if call else "tool"
        if len(text) > TOOL_RESULT_INLINE_CHARS:
            return [f"tool: {describe_result(call, text, facts.get(call_id, NO_FACTS))}"]
        return [f"tool ({name}): {text.strip()}"] if text.strip() else []
    lines = [f"{role}: {head_tail_text(text.strip(), TEXT_MAX_CHARS)}"] if text.strip() else []
    for raw_call in message.get("tool_calls") or ():
        call = parse_tool_call(raw_call)
        lines.append(f"{role} called {call.name}({_render_arguments(call.raw_arguments, call.arguments)})")
    return lines


def render_summary_input(
    dropped: list[dict],
    previous_summary: str | None = None,
    focus: str | None = None,
    kept_user_message: dict | None = None,
    max_chars: int = 60_000,
    facts: Mapping[str, ResultFacts] | None = None,
) -> str:
    """The user text of the summary request. `dropped` may start with an old summary message
    (its text is used as `previous_summary` if none is given). `kept_user_message` stays live
    after the summary, so it is named rather than summarised. At most `max_chars` (head and
    tail kept), so the summary request fits a small summariser window too."""
    if dropped and is_summary_message(dropped[0]):
        previous_summary = previous_summary or summary_text(dropped[0])
        dropped = dropped[1:]
    calls = tool_calls_by_id(dropped)
    conversation = "\n".join(line for m in dropped for line in _render_message(m, calls, facts or {}))
    parts = []
    if previous_summary:
        parts.append(f"Previous summary (bring it up to date with the conversation below):\n{previous_summary.strip()}")
    parts.append(f"Conversation to summarise:\n{conversation or '(no text)'}")
    if kept_user_message is not None:
        parts.append("(The latest user message is kept verbatim after the summary, so it is not shown here.)")
    if focus and focus.strip():
        parts.append(f"The user asks the summary to focus on: {focus.strip()}")
    return head_tail_text("\n\n".join(parts), max_chars, "\n…[{n} chars of the conversation cut]…\n")
