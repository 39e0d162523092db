"""Pure helpers over the conversation that keep it valid whatever stopped a run."""

from __future__ import annotations


def unanswered_calls(messages: list[dict]) -> list[str]:
    """Ids of the last assistant message's tool calls that have no result after it."""
    for i in range(len(messages) - 1, 0, -1):
        message = messages[i]
        if message.get("role") == "assistant":
            answered = {m.get("tool_call_id") for m in messages[i + 1 :] if m.get("role") == "tool"}
            return [call.get("id") for call in message.get("tool_calls") or [] if call.get("id") not in answered]
        if message.get("role") != "tool":
            return []
    return []


def last_assistant_text(messages: list[dict]) -> str:
    """The latest assistant text since the last user message ("" if none)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return ""
        if message.get("role") == "assistant" and (message.get("content") or "").strip():
            return message["content"]
    return ""
