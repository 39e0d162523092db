"""Layer (b): old, large tool outputs become one-line placeholders. No model call.

The message stays (pairs stay valid); only its content changes, to a line that says what
the result was and how to get it back with `recall`. Long argument values of old tool calls
(a write_file body, an edit's old/new text) shrink the same way: the file on disk has them.
"""

from __future__ import annotations

import json

from collections.abc import Mapping

from nanohermes.calls import NO_FACTS, ResultFacts, ToolCall, describe_call, tool_calls_by_id
from nanohermes.context.budget import PLACEHOLDER_MIN_CHARS

PLACEHOLDER_PREFIX = "[old tool output cleared to save context: "
# How much of a long argument value stays in an old tool call (enough to recognise it).
ARGUMENT_HEAD_CHARS = 160


def placeholder_text(call: ToolCall | None, call_id: str, content: str, facts: ResultFacts = NO_FACTS) -> str:
    """`[old tool output cleared to save context: read_file path=a.py — 18,342 chars; recall(id="call_1") returns it]`."""
    what = describe_call(call) if call else "tool result"
    details = f"{len(content):,} chars"
    if facts.exit_code is not None:
        details += f", exit code {facts.exit_code}"
    return f'{PLACEHOLDER_PREFIX}{what} — {details}; recall(id="{call_id}") returns it]'


def shrink_long_arguments(raw: str, min_chars: int) -> str | None:
    """The arguments JSON with long string values cut to their head, or None if unchanged."""
    try:
        args = json.loads(raw)
    except (json.JSONDecodeError, TypeError):
        return None
    if not isinstance(args, dict):
        return None
    changed = False
    for key, value in args.items():
        if isinstance(value, str) and len(value) > min_chars:
            note = f"…[{len(value) - ARGUMENT_HEAD_CHARS:,} more chars cleared to save context]"
            args[key] = value[:ARGUMENT_HEAD_CHARS] + note
            changed = True
    return json.dumps(args, ensure_ascii=False) if changed else None


def _shrink_tool_calls(message: dict, min_chars: int) -> dict:
    calls = message.get("tool_calls")
    if not calls or sum(len((c.get("function") or {}).get("arguments") or "") for c in calls) <= min_chars:
        return message
    new_calls, changed = [], False
    for call in calls:
        function = call.get("function") or {}
        shrunk = shrink_long_arguments(function.get("arguments"), min_chars)
        if shrunk is None:
            new_calls.append(call)
        else:
            new_calls.append({**call, "function": {**function, "arguments": shrunk}})
            changed = True
    return {**message, "tool_calls": new_calls} if changed else message


def placeholder_old_tool_outputs(
    messages: list[dict], keep_recent: int, min_chars: int = PLACEHOLDER_MIN_CHARS,
    facts: Mapping[str, ResultFacts] | None = None,
) -> tuple[list[dict], list[str]]:
    """Replace tool results (and long tool-call arguments) outside the last `keep_recent`
    messages that are over `min_chars` with placeholders. Never touches messages[0] or the
    tail. Returns (new list, ids of the results replaced); untouched dicts are reused."""
    tail_start = max(1, len(messages) - keep_recent)
    calls = tool_calls_by_id(messages[:tail_start])
    out, replaced = [messages[0]] if messages else [], []
    for message in messages[1:tail_start]:
        role, content = message.get("role"), message.get("content")
        if role == "tool" and isinstance(content, str) and len(content) > min_chars:
            call_id = str(message.get("tool_call_id"))
            text = placeholder_text(calls.get(call_id), call_id, content, (facts or {}).get(call_id, NO_FACTS))
            out.append({**message, "content": text})
            replaced.append(call_id)
        elif role == "assistant":
            out.append(_shrink_tool_calls(message, min_chars))
        else:
            out.append(message)
    out.extend(messages[tail_start:])
    return out, replaced
