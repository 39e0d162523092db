"""/context: what the next request holds, part by part, against the budget, as a bar. Pure."""

from __future__ import annotations

import json

from nanohermes.context import message_size, size_by_kind
from nanohermes.storage.memory import BLOCK_END, BLOCK_START

BAR_WIDTH = 40
PART_MARKS = {  # one glyph per part so the bar reads without colour
    "built-in rules": "R", "project guidance": "G", "skills listing": "K", "memory block": "M",
    "tool schemas": "T", "summary": "S", "user": "U", "assistant": "A", "tool calls": "C", "tool results": "O",
}


def context_parts(system_sections: dict[str, int], messages: list[dict], tool_schemas: list[dict]) -> dict[str, int]:
    """Chars per part of the next request. `system_sections` splits messages[0] by source; the
    memory blocks are counted out of the user messages they travel with."""
    kinds = size_by_kind(messages)
    system_total = message_size(messages[0]) if messages else 0
    memory = sum(_memory_chars(m) for m in messages if m.get("role") == "user")
    parts = dict(system_sections)
    parts["built-in rules"] = max(0, system_total - sum(system_sections.values()))
    parts["tool schemas"] = len(json.dumps(tool_schemas, ensure_ascii=False, separators=(",", ":")))
    parts.update({"memory block": memory, "summary": kinds["summary"], "user": kinds["user"] - memory,
                  "assistant": kinds["assistant"], "tool calls": kinds["tool_calls"], "tool results": kinds["tool"]})
    return {name: parts.get(name, 0) for name in PART_MARKS}


def _memory_chars(message: dict) -> int:
    content = message.get("content")
    at = content.rfind(BLOCK_START) if isinstance(content, str) else -1
    return len(content) - at if at >= 0 and content.endswith(BLOCK_END) else 0


def render_context(parts: dict[str, int], tokens: dict[str, int], budget: int) -> str:
    """A table of chars and estimated tokens per part, the total against the budget, and a bar."""
    total = sum(parts.values())
    lines = [f"{'part':<18}{'chars':>10}{'~tokens':>10}"]
    for name, chars in parts.items():
        if chars:
            lines.append(f"{PART_MARKS[name]} {name:<16}{chars:>10,}{tokens.get(name, 0):>10,}")
    lines.append(f"  {'total':<16}{total:>10,}{sum(tokens.values()):>10,}   budget {budget:,} chars ({100 * total / budget:.0f}%)")
    bar = []
    for name, chars in parts.items():
        bar.append(PART_MARKS[name] * round(BAR_WIDTH * chars / max(budget, total)))
    filled = "".join(bar)[:BAR_WIDTH]
    lines.append(f"[{filled}{'.' * (BAR_WIDTH - len(filled))}]" + (" over budget" if total > budget else ""))
    return "\n".join(lines)
