"""Where a compaction cuts (the kept tail), what it builds, and the middle trim. Pure.

The kept tail is chosen by size, not by count: the latest round always (an assistant message
with every result of its calls, or the latest user message), then earlier rounds while they
fit the low-water mark. A cut never separates a call from its result, and the latest user
message always stays verbatim.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from nanohermes.context.budget import TRIM_MIN_KEEP_CHARS, message_size
from nanohermes.context.images import IMAGES, apart_from_cleared, with_lines, without_images
from nanohermes.context.placeholders import shrink_tool_calls
from nanohermes.context.summary import SUMMARY_ACK, ack_message, find_summary
from nanohermes.text import head_tail_text

TRIM_NOTE = "\n…[{n} chars trimmed from the middle to fit the context budget]…\n"
TRIM_NOTE_RECALL = '\n…[{n} chars trimmed from the middle to fit the context budget; recall(id="{id}") returns them]…\n'


def latest_user_index(messages: list[dict]) -> int | None:
    for i in range(len(messages) - 1, 0, -1):
        if messages[i].get("role") == "user":
            return i
    return None


@dataclass(frozen=True)
class CutPlan:
    """What a compaction keeps and drops (indices into the original list)."""

    start: int  # first message of the kept tail
    previous_summary: int | None  # the old summary message: replaced, its text updated
    kept_user: int | None  # the latest user message, before the tail, kept verbatim

    def dropped(self, messages: list[dict]) -> list[dict]:
        """What the summary stands in for: messages[1:start] without the old summary, its
        acknowledgement and the kept user message."""
        skip = {self.previous_summary, self.kept_user}
        return [m for i, m in enumerate(messages[1 : self.start], 1) if i not in skip and not _is_ack(m)]


def _is_ack(message: dict) -> bool:
    return (
        message.get("role") == "assistant" and message.get("content") == SUMMARY_ACK and not message.get("tool_calls")
    )


def _round_start(messages: list[dict], end: int) -> int:
    """First index of the round that ends just before `end`: results belong to their call."""
    i = end - 1
    while i > 1 and messages[i].get("role") == "tool":
        i -= 1
    return i


def plan_cut(messages: list[dict], keep_chars: int, size_of: Callable[[dict], int] = message_size) -> CutPlan | None:
    """Keep the latest round, then earlier whole rounds while the kept messages stay within
    `keep_chars` (0: the latest round only). None when nothing before the tail can go."""
    latest_user = latest_user_index(messages)
    start = _round_start(messages, len(messages))
    if start < 1:
        return None
    used = sum(size_of(m) for m in messages[start:])
    if latest_user is not None and latest_user < start:
        used += size_of(messages[latest_user])
    floor = 2 if find_summary(messages) else 1  # the old summary is replaced, never kept
    while start > floor:
        earlier = _round_start(messages, start)
        block = sum(size_of(m) for i, m in enumerate(messages[earlier:start], earlier) if i != latest_user)
        if earlier < floor or used + block > keep_chars:
            break
        used, start = used + block, earlier
    plan = CutPlan(
        start, find_summary(messages), latest_user if latest_user is not None and latest_user < start else None
    )
    return plan if plan.dropped(messages) else None


def compact_history(messages: list[dict], plan: CutPlan, summary: dict) -> list[dict]:
    """[system, summary, (acknowledgement), latest user message if it was before the cut, *tail]:
    roles alternate after the system message, as strict chat templates require."""
    kept = ([messages[plan.kept_user]] if plan.kept_user is not None else []) + messages[plan.start :]
    ack = [ack_message()] if kept and kept[0].get("role") == "user" else []
    return [messages[0], summary, *ack, *kept]


def _trimmed_message(message: dict, excess: int, size_of: Callable[[dict], int], min_keep: int) -> dict:
    """The message with its content (then long tool-call arguments) trimmed by about `excess`
    serialised chars down to no less than `min_keep` chars, or the message itself if nothing can be trimmed."""
    content = message.get("content")
    new = message
    text, lines = apart_from_cleared(content) if isinstance(content, str) else (content, "")
    if isinstance(text, str) and len(text) > min_keep + 200:
        escaped_ratio = max(1.0, (message_size({"content": text}) - 14) / len(text))
        note = TRIM_NOTE_RECALL if message.get("role") == "tool" else TRIM_NOTE
        cut = math.ceil(excess * 1.02 / escaped_ratio) + len(note) + 40
        keep = max(min_keep, len(text) - cut)
        if keep < len(text) - len(note) - 40:
            note = note.replace("{id}", str(message.get("tool_call_id")))
            trimmed = head_tail_text(text, keep, note, head_share=2 / 5)
            new = {**message, "content": with_lines(trimmed, lines) if lines else trimmed}  # what images it had, whole
    if size_of(message) - size_of(new) < excess and new.get("tool_calls"):
        new = shrink_tool_calls(new, min_keep)
    if size_of(message) - size_of(new) < excess and IMAGES in new:  # its images, a line each
        new = without_images(new)
    return new


def trim_to_budget(
    messages: list[dict],
    budget: int,
    protected: set[int],
    size_of: Callable[[dict], int],
    min_keep: int = TRIM_MIN_KEEP_CHARS,
) -> tuple[list[dict], int]:
    """Middle trim: cut the largest unprotected messages from the middle until the total fits, none
    below `min_keep` chars. Messages are never removed and JSON is never cut, so pairs and arguments
    stay valid. Returns (new list, number of messages trimmed); may still be over if nothing is left."""
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
        new = _trimmed_message(out[index], total - budget, size_of, min_keep)
        if new is not out[index]:
            total += size_of(new) - size_of(out[index])
            out[index] = new
            trimmed += 1
    return out, trimmed
