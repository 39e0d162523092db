"""Streamed Markdown that never repeats in the scrollback.

A terminal cannot redraw what has scrolled out of view, so redrawing a whole answer taller
than the screen leaves copies of it behind. Here only the unfinished tail is live: every
Markdown block that is complete (a blank line, then a new unindented line, outside a code
fence; or a closing fence) is rendered once and printed above the live area, and when the
unfinished block itself outgrows the live window its top lines are printed too, as aider's
mdstream does (lines above the last few no longer change as text is appended: wrapping is
greedy and code lines are fixed). Rendering one block at a time also keeps each redraw
cheap, where re-parsing the whole answer on every delta is quadratic.

What is copied from the terminal is what was written: code blocks are drawn without rich's
padding (a leading space on every line, a background filled to the width) and no line ends in
spaces, so a copied block pastes clean.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from typing import ClassVar

from nanohermes.ui.escape import neutralize

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
LIVE_WINDOW_LINES = 8  # the live tail: the sentence being written and a little context, cheap to redraw
SCREEN_MARGIN_LINES = 6  # rows kept for the status line and the prompt in a small terminal
MIN_RENDER_INTERVAL_S = 0.05  # 20 redraws a second look smooth
RENDER_COST_FACTOR = 5  # a slow render (a long code block) spaces out the next ones...
MAX_RENDER_INTERVAL_S = 0.5  # ...but the tail never lags more than this behind the text


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and set(stripped) == {fence[0]} and len(stripped) >= len(fence)


def stable_end(text: str, start: int = 0) -> int:
    """How much of `text` (from `start`, a block boundary) is complete Markdown blocks: the
    offset where the last block that can no longer change ends."""
    end, pos, fence, after_blank = start, start, None, False
    for line in text[start:].splitlines(keepends=True):
        complete = line.endswith("\n")
        if fence is not None:
            if complete and _closes(line, fence):
                fence, end = None, pos + len(line)  # a closed fence is a whole block
        else:
            if after_blank and line.strip() and line[0] not in " \t":
                end = pos  # an unindented line after a blank one starts a new block
            opening = FENCE.match(line)
            if complete and opening:
                fence = opening.group(1)
            after_blank = complete and not line.strip()
        pos += len(line)
    return end


def open_fence(text: str) -> str | None:
    """The opening line of a code block that `text` leaves open, else None: text that continues
    it in a new stream (after a notice in the middle of the reply) is code too."""
    opening, fence = None, None
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break  # an unfinished line neither opens nor closes a block yet
        if fence is not None:
            if _closes(line, fence):
                opening, fence = None, None
        elif match := FENCE.match(line):
            opening, fence = line.rstrip("\n"), match.group(1)
    return opening


class MarkdownStream:
    """One assistant message. `feed` text as it arrives; `finish` at the end. Stable lines go
    to `emit` (printed once, above the live area); `live_lines` is what the live area shows."""

    def __init__(self, console, emit: Callable[[list], None], code_theme: str = "monokai"):
        self.console = console
        self.emit = emit
        self.code_theme = code_theme
        self.source = ""
        self._pieces: list[str] = []  # fed since the last render: `source +=` on every delta is quadratic
        self.done = 0  # chars of source already printed as complete blocks
        self.tail_printed = 0  # lines of the unfinished block printed because it outgrew the window
        self.started = False  # a block was printed: the next one is separated by a blank line
        self.live_lines: list = []
        self._next_render = 0.0

    def feed(self, text: str) -> None:
        self._pieces.append(neutralize(text))
        now = time.monotonic()
        if now < self._next_render or not self.console.is_terminal:
            return  # not a terminal: print once, at the end
        self._join()
        self._update(final=False)
        spent = time.monotonic() - now if self._next_render else 0.0  # the first render pays for imports
        self._next_render = time.monotonic() + min(
            MAX_RENDER_INTERVAL_S, max(MIN_RENDER_INTERVAL_S, RENDER_COST_FACTOR * spent)
        )

    def finish(self, keep_line: bool = False) -> str:
        """Print what is left; with `keep_line` all but an unfinished last line, which is
        returned (a later stream carries it on: a notice in the middle of a reply does not
        split a line of it)."""
        held = ""
        self._join()
        if keep_line:
            cut = self.source.rfind("\n") + 1
            held, self.source = self.source[cut:], self.source[:cut]
        self._update(final=True)
        self.live_lines = []
        return held

    def _join(self) -> None:
        self.source = "".join((self.source, *self._pieces))
        self._pieces = []

    def _update(self, final: bool) -> None:
        """The new live lines are set before anything is printed: a print redraws the live area
        below it, and drawn with the old tail it showed the lines just printed a second time,
        which a busy terminal scrolled into the scrollback."""
        printing: list = []
        end = len(self.source) if final else stable_end(self.source, self.done)
        if end > self.done:
            lines = self._render(self.source[self.done : end])
            printing += self._fresh(lines, self.tail_printed)
            self.done, self.tail_printed = end, 0
        tail = self.source[self.done :]
        lines = self._render(tail) if tail.strip() else []
        overflow = len(lines) - self._window()
        if overflow > self.tail_printed:
            printing += self._fresh(lines[:overflow], self.tail_printed)
            self.tail_printed = overflow
        self.live_lines = lines[self.tail_printed :]
        if printing:
            self.emit(printing)

    def _fresh(self, lines: list, skip: int) -> list:
        """lines[skip:], to print; a block's first line gets a blank line above it, as rich would."""
        fresh = lines[skip:]
        if not fresh:
            return []
        if skip == 0 and self.started:
            fresh = [[], *fresh]
        self.started = True
        return fresh

    def _window(self) -> int:
        return max(1, min(LIVE_WINDOW_LINES, self.console.height - SCREEN_MARGIN_LINES))

    def _render(self, text: str) -> list:
        rendered = markdown(text, self.code_theme)
        lines = [trimmed(line) for line in self.console.render_lines(rendered, self.console.options, pad=False)]
        while lines and not "".join(segment.text for segment in lines[-1]).strip():
            lines.pop()
        return lines


def trimmed(line: list) -> list:
    """A rendered line without the spaces rich pads it with to the width."""
    from rich.segment import Segment

    segments = list(line)
    while segments and not segments[-1].control:
        last = segments.pop()
        text = last.text.rstrip(" ")
        if text:
            segments.append(Segment(text, last.style))
            break
    return segments


def markdown(text: str, code_theme: str = "monokai"):
    """rich's Markdown, its code blocks drawn to copy clean: no padding, no background fill."""
    return _copyable_markdown()(text, code_theme=code_theme)


@functools.cache
def _copyable_markdown():
    from rich.markdown import CodeBlock, Markdown
    from rich.syntax import Syntax

    class CopyableCodeBlock(CodeBlock):
        def __rich_console__(self, console, options):
            code = str(self.text).rstrip()
            yield Syntax(code, self.lexer_name, theme=self.theme, word_wrap=True, background_color="default")

    class CopyableMarkdown(Markdown):
        elements: ClassVar[dict] = {**Markdown.elements, "fence": CopyableCodeBlock, "code_block": CopyableCodeBlock}

    return CopyableMarkdown
