"""Keep tool calls and results paired, as every provider requires.

Rule: the `tool` messages right after an assistant message answer the calls it declared,
each once. A result with no such call (its assistant was dropped, or it repeats an id) is
an orphan and is dropped; a declared call with no result gets a stub, so the request is
valid and the model knows the output is gone rather than pending.
"""

from __future__ import annotations

MISSING_RESULT_STUB = "[result omitted — see the earlier conversation summary]"


def _declared_ids(message: dict) -> list[str]:
    if message.get("role") != "assistant":
        return []
    return [str(c.get("id")) for c in message.get("tool_calls") or () if c.get("id")]


def sanitize_tool_pairs(messages: list[dict], stub: str = MISSING_RESULT_STUB) -> list[dict]:
    """A new list where every tool message answers a call declared by the assistant message
    just before its block, and every declared call has exactly one result (stubbed if needed).

    Message dicts are reused, not copied; a valid history comes back equal to the input."""
    out: list[dict] = []
    pending: list[str] = []  # declared by the current assistant message, not yet answered

    def close_block() -> None:
        out.extend({"role": "tool", "tool_call_id": call_id, "content": stub} for call_id in pending)
        pending.clear()

    for message in messages:
        if message.get("role") == "tool":
            call_id = str(message.get("tool_call_id"))
            if call_id in pending:
                pending.remove(call_id)
                out.append(message)
            continue  # orphan or duplicate
        close_block()
        out.append(message)
        pending.extend(dict.fromkeys(_declared_ids(message)))
    close_block()
    return out


def pairing_problems(messages: list[dict]) -> list[str]:
    """What sanitize_tool_pairs would fix, in words (empty for a valid history)."""
    problems: list[str] = []
    pending: list[str] = []
    for i, message in enumerate(messages):
        if message.get("role") == "tool":
            call_id = str(message.get("tool_call_id"))
            if call_id in pending:
                pending.remove(call_id)
            else:
                problems.append(f"message {i}: tool result {call_id} answers no open call")
            continue
        problems.extend(f"before message {i}: call {c} has no result" for c in pending)
        pending = list(dict.fromkeys(_declared_ids(message)))
    problems.extend(f"at the end: call {c} has no result" for c in pending)
    return problems
