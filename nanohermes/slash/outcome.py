"""What a slash command of the table gives back: plain data, never printed here. The REPL renders
it with rich (ui/outcome_view.py), an editor as Markdown (acp/commands.py).

An Outcome is blocks to show, in order, an optional note for the model (told through Agent.tell,
tagged, never glued into the user's words) and, for a command that expands (a command file, an MCP
server's prompt), the prompt to send as the turn instead. A block is Text (lines in one tone), Spans
(one line of toned pieces), Diff (a unified diff's lines, shown up to a limit) or Parts (what the next
request holds, part by part). A tone says what a piece is, not how it looks: each front end decides."""

from __future__ import annotations

from dataclasses import dataclass, field

PLAIN = ""
QUIET = "quiet"  # beside the point: a count, where a figure came from
ASIDE = "aside"  # one line about the command itself (nothing to do, done): the REPL's `· ` line
WARNING = "warning"  # not done, or done with a caveat
STRONG = "strong"  # a heading: a file's name over its diff
MARK = "mark"  # the sign before a line that says what changed (↶)


@dataclass(frozen=True)
class Text:
    text: str  # may hold several lines
    tone: str = PLAIN


@dataclass(frozen=True)
class Spans:
    pieces: tuple[tuple[str, str], ...]  # (text, tone), one line


@dataclass(frozen=True)
class Diff:
    lines: tuple[str, ...]  # a unified diff, headers first
    limit: int  # shown at most; the rest counted


@dataclass(frozen=True)
class Parts:
    """What the next request holds: chars and tokens per part (in the order to show them), against
    `limit` tokens, which `label` names (the window, or where compaction starts)."""

    chars: dict[str, int]
    tokens: dict[str, int]
    limit: int
    label: str


Block = Text | Spans | Diff | Parts


@dataclass(frozen=True)
class Note:
    """A note for the model (Agent.tell): its synthetic kind (loop/nudges.py) and words."""

    kind: str
    text: str


@dataclass(frozen=True)
class Outcome:
    blocks: tuple[Block, ...] = ()
    note: Note | None = None
    prompt: str | None = None  # the text the model gets as the turn (a command that expands)
    mentions: object = field(default=None)  # the words of `prompt` that may name files (prompt/mentions.py)


def said(*blocks: Block, note: Note | None = None) -> Outcome:
    return Outcome(tuple(blocks), note)


def words(outcome: Outcome) -> str:
    """Every piece of text the outcome shows, joined (what a front end compares a notice with)."""
    parts = []
    for block in outcome.blocks:
        if isinstance(block, Text):
            parts.append(block.text)
        elif isinstance(block, Spans):
            parts.append("".join(text for text, _ in block.pieces))
    return "\n".join(parts)
