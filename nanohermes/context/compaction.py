"""Pure compaction steps: the cut point, the compacted list, and layer (d) trimming."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from nanohermes.text import head_tail_text
from nanohermes.context.budget import TRIM_MIN_KEEP_CHARS, message_size
from nanohermes.context.placeholders import shrink_long_arguments
from nanohermes.context.sanitize import sanitize_tool_pairs
from nanohermes.context.summary_message import find_summary

TRIM_NOTE = "\n…[{n} chars trimmed from the middle to fit the context budget]…\n"
TRIM_NOTE_RECALL = '\n…[{n} chars trimmed from the middle to fit the context budget; recall(id="{id}") returns them]…\n'


def cut_point(messages: list[dict], keep_recent: int) -> int | None:
    """Index of the first kept message: len - keep_recent, moved forward past `tool` messages
    (a kept result needs its call). None when nothing before it can go (start <= 1: the
    system message at 0 is never dropped)."""
    start = max(0, len(messages) - keep_recent)
    while start < len(messages) and messages[start].get("role") == "tool":
        start += 1
    return start if start > 1 else None


def latest_user_index(messages: list[dict]) -> int | None:
    for i in range(len(messages) - 1, 0, -1):
        if messages[i].get("role") == "user":
            return i
    return None


@dataclass(frozen=True)
class CutPlan:
    """What a summarising compaction keeps and drops (indices into the original list)."""

    start: int  # first message of the kept tail
    previous_summary_index: int | None  # the old summary message, replaced, never kept twice
    kept_user_index: int | None  # the latest user message, before the tail, kept verbatim

    def dropped(self, messages: list[dict]) -> list[dict]:
        """The messages the summary stands in for (old summary and kept user message excluded)."""
        skip = {self.previous_summary_index, self.kept_user_index}
        return [m for i, m in enumerate(messages[1 : self.start], 1) if i not in skip]


def plan_cut(messages: list[dict], keep_recent: int) -> CutPlan | None:
    start = cut_point(messages, keep_recent)
    if start is None:
        return None
    user = latest_user_index(messages)
    return CutPlan(start, find_summary(messages), user if user is not None and user < start else None)


def compact_history(messages: list[dict], plan: CutPlan, summary: dict) -> list[dict]:
    """[system, summary, latest user message if it was before the cut, *tail], pairs sanitised."""
    kept_user = [messages[plan.kept_user_index]] if plan.kept_user_index is not None else []
    return sanitize_tool_pairs([messages[0], summary, *kept_user, *messages[plan.start :]])


def _trimmed_message(message: dict, excess: int, size_of: Callable[[dict], int]) -> dict:
    """The message with its content (then long tool-call arguments) trimmed by about `excess`
    serialised chars, or the message itself if nothing can be trimmed."""
    content = message.get("content")
    new = message
    if isinstance(content, str) and len(content) > TRIM_MIN_KEEP_CHARS + 200:
        escaped_ratio = max(1.0, (message_size({"content": content}) - 14) / len(content))
        note = TRIM_NOTE_RECALL if message.get("role") == "tool" else TRIM_NOTE
        cut = math.ceil(excess * 1.02 / escaped_ratio) + len(note) + 40
        keep = max(TRIM_MIN_KEEP_CHARS, len(content) - cut)
        if keep < len(content) - len(note) - 40:
            new = {**message, "content": head_tail_text(content, keep, note.replace("{id}", str(message.get("tool_call_id"))), head_share=2 / 5)}
    if size_of(message) - size_of(new) < excess and new.get("tool_calls"):
        calls = []
        for call in new["tool_calls"]:
            function = call.get("function") or {}
            shrunk = shrink_long_arguments(function.get("arguments"), TRIM_MIN_KEEP_CHARS)
            calls.append(call if shrunk is None else {**call, "function": {**function, "arguments": shrunk}})
        if any(a is not b for a, b in zip(calls, new["tool_calls"])):
            new = {**new, "tool_calls": calls}
    return new


def trim_to_budget(
    messages: list[dict], budget: int, protected: set[int], size_of: Callable[[dict], int]
) -> tuple[list[dict], int]:
    """Layer (d): trim the largest unprotected messages from the middle until the total fits.
    Messages are never removed and JSON is never cut, so pairs and arguments stay valid.
    Returns (new list, number of messages trimmed); may still be over if nothing is left."""
    out = list(messages)
    total = sum(size_of(m) for m in out)
    tried: set[int] = set(protected)
    trimmed = 0
    while total > budget:
        candidates = [i for i in range(len(out)) if i not in tried]
        if not candidates:
            break
        index = max(candidates, key=lambda i: size_of(out[i]))
        tried.add(index)
        new = _trimmed_message(out[index], total - budget, size_of)
        if new is not out[index]:
            total += size_of(new) - size_of(out[index])
            out[index] = new
            trimmed += 1
    return out, trimmed
