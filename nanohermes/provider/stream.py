"""Folding a chat.completion.chunk stream into one assistant turn (text, tool calls, usage)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class AssistantTurn:
    content: str = ""
    tool_calls: list[dict] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict | None = None

    def as_message(self) -> dict:
        message: dict = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message


class StreamCut(Exception):
    """The connection closed before a finish_reason arrived: the reply is incomplete."""


def _call_index(tc, calls: dict[int, dict]) -> int:
    """Servers that omit `index`: a delta with a new id starts a call, others continue the last."""
    if tc.index is not None:
        return tc.index
    if calls and (not tc.id or tc.id == calls[max(calls)]["id"]):
        return max(calls)
    return len(calls)


def assemble_stream(stream, on_text: Callable[[str], None]) -> AssistantTurn:
    """Fold chat.completion.chunk deltas into one AssistantTurn; tool calls are keyed by index."""
    turn = AssistantTurn()
    text_parts: list[str] = []
    calls: dict[int, dict] = {}
    try:
        for chunk in stream:
            if getattr(chunk, "usage", None):
                turn.usage = chunk.usage.model_dump()
            for choice in chunk.choices or []:
                delta = choice.delta
                if delta is not None and delta.content:
                    text_parts.append(delta.content)
                    on_text(delta.content)
                for tc in (delta.tool_calls or []) if delta is not None else []:
                    slot = calls.setdefault(_call_index(tc, calls), {"id": "", "name": "", "arguments": ""})
                    if tc.id:
                        slot["id"] = tc.id
                    if tc.function is not None:
                        name = tc.function.name or ""
                        if name != slot["name"]:  # some servers repeat the name in every chunk
                            slot["name"] += name
                        slot["arguments"] += tc.function.arguments or ""
                if choice.finish_reason:
                    turn.finish_reason = choice.finish_reason
    finally:
        close = getattr(stream, "close", None)
        if close:
            close()
    if turn.finish_reason is None:
        raise StreamCut("the stream ended before the reply was finished")
    turn.content = "".join(text_parts)
    for n, (_, slot) in enumerate(sorted(calls.items())):
        call_id = slot["id"] or f"call_{n}_{random.randrange(16**8):08x}"  # some servers omit ids
        turn.tool_calls.append({"id": call_id, "type": "function", "function": {"name": slot["name"], "arguments": slot["arguments"]}})
    return turn
