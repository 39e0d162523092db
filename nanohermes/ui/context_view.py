"""/context: what the next request holds, part by part, in tokens (chars beside them), against
the window or the context limit (where compaction starts), with a bar of coloured segments whose
legend is the table. Pure: sizes in (slash/conversation.py counts them), lines of (text, style) spans
out; fits 60 columns.
"""

from __future__ import annotations

# One colour per part (slash/conversation.py's PART_NAMES, in order), and a letter for terminals
# without colour (the bar still reads).
PARTS = {
    "built-in rules": ("blue", "R"),
    "project guidance": ("magenta", "G"),
    "skills listing": ("cyan", "K"),
    "memory block": ("yellow", "M"),
    "tool schemas": ("bright_black", "T"),
    "summary": ("bright_magenta", "S"),
    "user": ("green", "U"),
    "loop notes": ("bright_yellow", "N"),  # what the loop told the model (a nudge), in the user role
    "assistant": ("bright_blue", "A"),
    "tool calls": ("bright_cyan", "C"),
    "tool results": ("red", "O"),
}
MAX_BAR_CELLS = 60  # wider is no more readable
MIN_BAR_CELLS = 10
NAME_WIDTH = 17
OVER = " over"


def _swatch(name: str, colour: bool) -> tuple[str, str]:
    style, letter = PARTS[name]
    return ("██", style) if colour else (letter * 2, "")


def _bar(tokens: dict[str, int], scale: int, cells: int, colour: bool) -> list[tuple[str, str]]:
    spans, used = [], 0
    for name, count in tokens.items():
        n = min(cells - used, max(1, round(cells * count / scale))) if scale and count else 0  # every part shows
        if n > 0:
            style, letter = PARTS[name]
            spans.append(("█" * n if colour else letter * n, style if colour else ""))
            used += n
    spans.append(("·" * (cells - used), "dim"))
    return spans


def render_context(
    parts: dict[str, int], tokens: dict[str, int], limit: int, limit_label: str, *, width: int = 80, colour: bool = True
) -> list[list[tuple[str, str]]]:
    """A row per part (tokens, chars, share), the total against `limit` tokens (`limit_label`
    says what it is), and a bar `width` columns wide at most."""
    total_tokens, total_chars = sum(tokens.values()), sum(parts.values())
    lines = [[(f"   {'part':<{NAME_WIDTH}}{'tokens':>9}{'chars':>10}{'share':>7}", "bold")]]
    for name, chars in parts.items():
        count = tokens.get(name, 0)
        share = f"{100 * count / total_tokens:.0f}%" if total_tokens else "-"
        style = "" if chars else "dim"
        lines.append([_swatch(name, colour), (f" {name:<{NAME_WIDTH}}{count:>9,}{chars:>10,}{share:>7}", style)])
    lines.append([(f"   {'total':<{NAME_WIDTH}}{total_tokens:>9,}{total_chars:>10,}", "bold")])
    over = total_tokens > limit
    used = f"{100 * total_tokens / limit:.0f}%" if limit else "?"
    lines.append([(f"   {used} of {limit_label}", "red" if over else "")])
    cells = max(MIN_BAR_CELLS, min(MAX_BAR_CELLS, width - 2 - (len(OVER) if over else 0)))
    bar = [("[", "dim"), *_bar(tokens, max(limit, total_tokens), cells, colour), ("]", "dim")]
    lines.append(bar + ([(OVER, "red")] if over else []))
    return lines
