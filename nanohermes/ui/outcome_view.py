"""A slash command's Outcome (slash/outcome.py) as the REPL shows it: lines of (text, style) spans,
every text neutralized (a file name or a memory holding escape sequences is shown, not run). Pure."""

from __future__ import annotations

from nanohermes.slash.outcome import ASIDE, MARK, PLAIN, QUIET, STRONG, WARNING, Diff, Outcome, Parts, Spans, Text
from nanohermes.ui.context_view import render_context
from nanohermes.ui.escape import neutralize
from nanohermes.ui.toolview import Line, coloured_diff

STYLES = {PLAIN: "", QUIET: "dim", ASIDE: "dim", WARNING: "yellow", STRONG: "bold", MARK: "cyan"}
ASIDE_MARK = "· "  # the REPL's one-line remarks start so


def outcome_lines(outcome: Outcome, width: int = 80, colour: bool = True) -> list[Line]:
    lines: list[Line] = []
    for block in outcome.blocks:
        if isinstance(block, Text):
            text = ASIDE_MARK + block.text if block.tone == ASIDE else block.text
            lines.append([(neutralize(text), STYLES[block.tone])])
        elif isinstance(block, Spans):
            lines.append([(neutralize(text), STYLES[tone]) for text, tone in block.pieces])
        elif isinstance(block, Diff):
            lines += coloured_diff(list(block.lines), block.limit)
        elif isinstance(block, Parts):
            lines += render_context(block.chars, block.tokens, block.limit, block.label, width=width, colour=colour)
    return lines
