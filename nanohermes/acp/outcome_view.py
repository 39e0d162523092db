"""A slash command's Outcome (slash/outcome.py) as an editor shows it: Markdown, a paragraph per
block; a diff in a ```diff fence, what the next request holds as a table. Pure."""

from __future__ import annotations

from nanohermes.slash.outcome import STRONG, Diff, Outcome, Parts, Spans, Text

HARD_BREAK = "  \n"  # Markdown's line break inside a paragraph: a listing keeps its lines


def markdown(outcome: Outcome) -> str:
    return "\n\n".join(_block(block) for block in outcome.blocks)


def _block(block) -> str:
    if isinstance(block, Text):
        return _strong(_lines(block.text)) if block.tone == STRONG else _lines(block.text)
    if isinstance(block, Spans):
        return "".join(_strong(text) if tone == STRONG else text for text, tone in block.pieces)
    if isinstance(block, Diff):
        cut = f"\n… {len(block.lines) - block.limit} more lines" if len(block.lines) > block.limit else ""
        return "```diff\n" + "\n".join(block.lines[: block.limit]) + cut + "\n```"
    if isinstance(block, Parts):
        return _parts(block)
    raise TypeError(f"not a block: {block!r}")


def _lines(text: str) -> str:
    """Each line of `text` a line of the paragraph (indentation dropped: four spaces would start a
    code block); a blank line starts a new paragraph."""
    lines = [line.strip() for line in text.strip("\n").splitlines()]
    return HARD_BREAK.join(lines).replace(HARD_BREAK + HARD_BREAK, "\n\n")


def _strong(text: str) -> str:
    return f"**{text}**" if text.strip() else text


def _parts(parts: Parts) -> str:
    total_tokens, total_chars = sum(parts.tokens.values()), sum(parts.chars.values())
    used = f"{100 * total_tokens / parts.limit:.0f}%" if parts.limit else "?"
    rows = [
        f"| {name} | {parts.tokens.get(name, 0):,} | {chars:,} | "
        f"{100 * parts.tokens.get(name, 0) / total_tokens if total_tokens else 0:.0f}% |"
        for name, chars in parts.chars.items()
        if chars
    ]
    head = f"The next request holds {total_tokens:,} tokens ({total_chars:,} chars): {used} of {parts.label}."
    return "\n".join([head, "", "| part | tokens | chars | share |", "|---|---:|---:|---:|", *rows])
