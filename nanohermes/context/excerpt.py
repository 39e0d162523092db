"""The excerpt: the dropped messages as compact text, for a summary request that cannot reuse
the conversation's prefix (another summary model, or a conversation too long to resend).

Each message becomes `role: content`; each assistant tool call becomes `name(arguments)` (so
the summary knows which file was read or edited, which `role: content` alone would lose); long
tool results become a one-line description; other long texts keep their head and tail.
"""

from __future__ import annotations

from collections.abc import Mapping

from nanohermes.calls import NO_FACTS, ResultFacts, describe_result, parse_tool_call, tool_calls_by_id
from nanohermes.context.placeholders import shrink_arguments
from nanohermes.synthetic import is_users
from nanohermes.text import head_tail_text, strip_thinking

# Tool results up to this size are shown whole: short outputs ("edited x.py: 1 replacement",
# "exit code 0, 3 passed") are the facts a summary needs, and cost little.
TOOL_RESULT_INLINE_CHARS = 400
# User and assistant texts longer than this keep head and tail (Hermes keeps 4,000 + 1,500).
TEXT_MAX_CHARS = 5_500
# Tool-call argument values longer than this are cut (a write_file body is on disk).
ARGUMENT_VALUE_MAX_CHARS = 200


def _render_message(message: dict, calls: dict, facts: Mapping[str, ResultFacts]) -> list[str]:
    role = str(message.get("role") or "?") if is_users(message) or message.get("role") != "user" else "NanoHermes"
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    if role == "tool":
        call_id = str(message.get("tool_call_id"))
        call = calls.get(call_id)
        if len(text) > TOOL_RESULT_INLINE_CHARS:
            return [f"tool: {describe_result(call, text, facts.get(call_id, NO_FACTS))}"]
        return [f"tool ({call.name if call else 'tool'}): {text.strip()}"] if text.strip() else []
    if role == "assistant":
        text = strip_thinking(text)
    lines = [f"{role}: {head_tail_text(text.strip(), TEXT_MAX_CHARS)}"] if text.strip() else []
    for raw_call in message.get("tool_calls") or ():
        call = parse_tool_call(raw_call)
        arguments = shrink_arguments(call.raw_arguments, ARGUMENT_VALUE_MAX_CHARS) or call.raw_arguments
        lines.append(f"{role} called {call.name}({arguments if arguments.strip() not in ('', '{}') else ''})")
    return lines


def render_excerpt(
    dropped: list[dict],
    previous_summary: str | None,
    focus: str | None,
    kept_user: bool,
    max_chars: int,
    facts: Mapping[str, ResultFacts] | None = None,
) -> str:
    """The user text of a summary request that does not reuse the prefix: the previous summary
    (to update), the dropped messages, and the focus. `kept_user`: the latest user message stays
    live after the summary, so it is named rather than summarised. At most `max_chars` (head and
    tail kept), so the request fits a small summariser window too."""
    calls = tool_calls_by_id(dropped)
    conversation = "\n".join(line for m in dropped for line in _render_message(m, calls, facts or {}))
    parts = []
    if previous_summary:
        parts.append(f"Previous summary (bring it up to date with the conversation below):\n{previous_summary.strip()}")
    parts.append(f"Conversation to summarise:\n{conversation or '(no text)'}")
    if kept_user:
        parts.append("(The latest user message is kept verbatim after the summary, so it is not shown here.)")
    if focus and focus.strip():
        parts.append(f"The user asks the summary to focus on: {focus.strip()}")
    return head_tail_text("\n\n".join(parts), max_chars, "\n…[{n} chars of the conversation cut]…\n")
