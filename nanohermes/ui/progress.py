"""The REPL's live area, on a terminal only: the unfinished tail of a streamed answer, one
status line (a spinner, what is happening, elapsed seconds, a running command's last output
lines) and, while a turn runs, the input line with the messages queued for after it (ui/keys.py).
Everything else is printed above it, once. Gone when the turn ends (transient).

A rich Live refreshes it from its own thread, so the elapsed time moves while the main
thread is blocked on the network or a command; the main thread only swaps in new values.

A resize: a terminal that re-wraps its lines (tmux, iTerm2, VTE, kitty, WezTerm, Windows
Terminal) makes a line drawn at the old width take more rows at a narrower one, and rich, which
moves up as many rows as it drew, left the top of the old area on screen: a stale line. The
area's last drawing is measured (ReflowingRender) and erased by the rows it takes now. (In a
terminal that cuts lines instead, xterm, the same count may also blank a few lines above the
area on screen; the session keeps them.)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from nanohermes.ui.escape import neutralize

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
REFRESH_PER_SECOND = 10  # smooth for a spinner, cheap for a few lines
SPINNER_FRAMES_PER_SECOND = 10
DETAIL_LINES = 2  # a running command's last output lines under the status
INPUT_PROMPT = "> "  # not the prompt's "›": Enter here queues, it does not send
INPUT_HINT = "type ahead: Enter queues it for after this turn · Esc stops the turn"
QUEUED_MARK = "  ⏎ queued: "
CURSOR = "▌"  # the terminal's own cursor is hidden while the area is live
Typed = Callable[[], tuple[str, tuple[str, ...]]]  # (the line being typed, the queued messages)


# The live area: redrawn on its own, erased when done, never catching prints, cut to the screen.
LIVE_AREA = dict(auto_refresh=True, transient=True, redirect_stdout=False, redirect_stderr=False)


@dataclass(frozen=True)
class Status:
    label: str
    started: float
    detail: tuple[str, ...] = ()


def rows_after_resize(line_cells: list[int], drawn_width: int, width: int) -> int:
    """Rows the lines drawn at `drawn_width` take once a re-wrapping terminal is `width` wide."""
    if width >= drawn_width or width <= 0:
        return len(line_cells)
    return sum(max(1, -(-cells // width)) for cells in line_cells)


def _reflowing_render(renderable):
    """rich's LiveRender, but it erases by the rows its last drawing takes at the width now."""
    from rich.control import Control, ControlType
    from rich.live_render import LiveRender
    from rich.segment import Segment

    class ReflowingRender(LiveRender):
        console = None
        drawn: tuple[int, list[int]] = (0, [])  # (width drawn at, cells per line)

        def __rich_console__(self, console, options):
            self.console = console
            segments = list(super().__rich_console__(console, options))
            cells = [Segment.get_line_length(line) for line in Segment.split_lines(segments)]
            self.drawn = (options.max_width, cells)
            yield from segments

        def _rows(self) -> int:
            width = self.console.width if self.console is not None else 0
            return rows_after_resize(self.drawn[1], self.drawn[0], width) if self._shape else 0

        def position_cursor(self) -> Control:
            rows = self._rows()
            if not rows:
                return super().position_cursor()
            up = ((ControlType.CURSOR_UP, 1), (ControlType.ERASE_IN_LINE, 2)) * (rows - 1)
            return Control(ControlType.CARRIAGE_RETURN, (ControlType.ERASE_IN_LINE, 2), *up)

        def restore_cursor(self) -> Control:
            rows = self._rows()
            if not rows:
                return super().restore_cursor()
            return Control(
                ControlType.CARRIAGE_RETURN, *((ControlType.CURSOR_UP, 1), (ControlType.ERASE_IN_LINE, 2)) * rows
            )

    return ReflowingRender(renderable, vertical_overflow="crop")


def elapsed(seconds: float) -> str:
    return f"{seconds:.1f}s" if seconds < 60 else f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


class LiveArea:
    def __init__(self, console):
        self.console = console
        self.tail: list = []  # rendered lines (lists of segments) of the unfinished Markdown block
        self.status: Status | None = None
        self.typed: Typed | None = None  # the input line's source while a turn runs
        self._live = None
        self._paused = False

    # -- what is shown -------------------------------------------------------------------

    def set_status(self, label: str, started: float | None = None) -> None:
        self.status = Status(neutralize(label), time.monotonic() if started is None else started)
        self._ensure()

    def set_detail(self, text: str) -> None:
        if self.status is not None:
            lines = tuple(neutralize(line) for line in text.splitlines() if line.strip())[-DETAIL_LINES:]
            self.status = Status(self.status.label, self.status.started, lines)

    def clear_status(self) -> None:
        self.status = None

    def show_input(self, typed: Typed | None) -> None:
        """Show the input line (and what is queued) from `typed`, until the area stops; None hides it."""
        self.typed = typed
        if typed is not None:
            self._ensure()

    def set_tail(self, lines: list) -> None:
        self.tail = lines
        if lines:
            self._ensure()

    def print(self, renderable) -> None:
        """Above the live area, into the scrollback. Under the Live's lock from start to end:
        rich takes it only while it moves the cursor up over the live area, so a refresh in
        between drew a live area of another height, the print erased the old height, and the
        leftover lines (the answer's tail) were printed again later: a paragraph twice."""
        live = self._live
        if live is None:
            self.console.print(renderable, highlight=False)
            return
        with live._lock:  # the lock rich's own refresh thread holds for a whole redraw
            self.console.print(renderable, highlight=False)

    # -- lifetime ------------------------------------------------------------------------

    def _ensure(self) -> None:
        if self._live is None and not self._paused and self.console.is_terminal:
            from rich.live import Live

            self._live = Live(
                self, console=self.console, refresh_per_second=REFRESH_PER_SECOND, vertical_overflow="crop", **LIVE_AREA
            )
            self._live._live_render = _reflowing_render(self)  # rich has no hook for it (tests/ui pin the result)
            self._live.start()

    def stop(self) -> None:
        """Erase the live area (its content was printed above it, or is no longer true)."""
        self.tail, self.status, self.typed = [], None, None
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()

    def pause(self) -> None:
        """Give the terminal to a prompt; `resume` brings the status back."""
        self._paused = True
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()

    def resume(self) -> None:
        self._paused = False
        if self.status is not None or self.tail or self.typed is not None:
            self._ensure()

    # -- rendering (called from the refresh thread) --------------------------------------

    def __rich_console__(self, console, options):
        from rich.segment import SegmentLines

        tail, status, typed = self.tail, self.status, self.typed  # one read each: the main thread may swap them
        if tail:
            yield SegmentLines(tail, new_lines=True)
        if status is not None:
            yield from self._status_lines(status, options.max_width)
        if typed is not None:
            yield from input_lines(*typed(), options.max_width)

    def _status_lines(self, status: Status, width: int):
        from rich.text import Text

        seconds = time.monotonic() - status.started
        frame = SPINNER[int(seconds * SPINNER_FRAMES_PER_SECOND) % len(SPINNER)]
        line = Text.assemble((frame, "cyan"), " ", status.label, (f" · {elapsed(seconds)}", "dim"))
        line.truncate(width, overflow="ellipsis")
        yield line
        for detail in status.detail:
            text = Text.assemble(("  │ ", "dim"), (detail, "dim"))
            text.truncate(width, overflow="ellipsis")
            yield text


def input_lines(line: str, queued: tuple[str, ...], width: int) -> list:
    """The queued messages (one line each) and the input line, its end in view; each within
    `width` - 1 columns, so none wraps (a wrapped line would leave a copy behind on a redraw)."""
    from rich.text import Text

    room = max(1, width - 1)
    shown = []
    for message in queued:
        text = Text.assemble((QUEUED_MARK, "dim"), (neutralize(" ".join(message.split())), "cyan"))
        text.truncate(room, overflow="ellipsis")
        shown.append(text)
    if line:
        typed = neutralize(line.replace("\n", " "))
        keep = max(2, room - len(INPUT_PROMPT) - len(CURSOR))
        typed = typed if len(typed) <= keep else "…" + typed[-(keep - 1) :]
        shown.append(Text.assemble((INPUT_PROMPT, "bold"), typed, (CURSOR, "dim")))
    else:
        hint = Text.assemble((INPUT_PROMPT, "bold"), (CURSOR, "dim"), (" " + INPUT_HINT, "dim"))
        hint.truncate(room, overflow="ellipsis")
        shown.append(hint)
    return shown
