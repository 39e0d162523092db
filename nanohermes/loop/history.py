"""Pure helpers over the conversation that keep it valid whatever stopped a run."""

from __future__ import annotations

INTERRUPTED = "[interrupted by user]"
STOPPED = "[interrupted: NanoHermes was stopped by {}]"  # SIGTERM or SIGHUP
NO_ANSWER = "[no answer: the request failed]"
NO_RESULT_AFTER_CRASH = "[no result: the previous run ended before this call finished]"


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


def interrupted_reply(messages: list[dict], streamed: str) -> dict | None:
    """What is kept of a reply stopped while it streamed: its text (half-received tool calls
    are dropped), marked interrupted; None when nothing came and the history needs nothing."""
    if messages[-1]["role"] != "user" and not streamed:
        return None
    return {"role": "assistant", "content": (streamed + "\n" if streamed else "") + INTERRUPTED}


def last_assistant_text(messages: list[dict]) -> str:
    """The latest assistant text since the last user message ("" if none)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return ""
        if message.get("role") == "assistant" and (message.get("content") or "").strip():
            return message["content"]
    return ""


def ids_in(messages: list[dict]) -> set[str]:
    """Every tool call id the messages hold (calls and results)."""
    ids = {m["tool_call_id"] for m in messages if isinstance(m.get("tool_call_id"), str)}
    return ids | {c.get("id") for m in messages for c in m.get("tool_calls") or () if isinstance(c, dict)}


def with_fresh_ids(calls: list[dict], used: set[str]) -> list[dict]:
    """The calls, each id not in `used` (and added to it): a server that numbers every reply's
    calls from call_0 would give a later output the id of an earlier one, and `recall` of the
    earlier id would return the later output."""
    fresh = []
    for call in calls:
        call_id, n = call.get("id") or "call", 1
        while call_id in used:
            call_id, n = f"{call.get('id') or 'call'}_{n}", n + 1
        used.add(call_id)
        fresh.append({**call, "id": call_id} if call_id != call.get("id") else call)
    return fresh
