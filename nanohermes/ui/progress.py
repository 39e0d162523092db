"""The REPL's live area, on a terminal only: the unfinished tail of a streamed answer and one
status line (a spinner, what is happening, elapsed seconds, a running command's last output
lines). Everything else is printed above it, once. Gone when the turn ends (transient).

A rich Live refreshes it from its own thread, so the elapsed time moves while the main
thread is blocked on the network or a command; the main thread only swaps in new values.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from nanohermes.ui.escape import neutralize

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
REFRESH_PER_SECOND = 10  # smooth for a spinner, cheap for a few lines
SPINNER_FRAMES_PER_SECOND = 10
DETAIL_LINES = 2  # a running command's last output lines under the status


@dataclass(frozen=True)
class Status:
    label: str
    started: float
    detail: tuple[str, ...] = ()


def elapsed(seconds: float) -> str:
    return f"{seconds:.1f}s" if seconds < 60 else f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


class LiveArea:
    def __init__(self, console):
        self.console = console
        self.tail: list = []  # rendered lines (lists of segments) of the unfinished Markdown block
        self.status: Status | None = None
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
                self,
                console=self.console,
                auto_refresh=True,
                refresh_per_second=REFRESH_PER_SECOND,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
                vertical_overflow="crop",
            )
            self._live.start()

    def stop(self) -> None:
        """Erase the live area (its content was printed above it, or is no longer true)."""
        self.tail, self.status = [], None
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
        if self.status is not None or self.tail:
            self._ensure()

    # -- rendering (called from the refresh thread) --------------------------------------

    def __rich_console__(self, console, options):
        from rich.segment import SegmentLines
        from rich.text import Text

        tail, status = self.tail, self.status  # one read each: the main thread may swap them
        if tail:
            yield SegmentLines(tail, new_lines=True)
        if status is None:
            return
        seconds = time.monotonic() - status.started
        frame = SPINNER[int(seconds * SPINNER_FRAMES_PER_SECOND) % len(SPINNER)]
        line = Text.assemble((frame, "cyan"), " ", status.label, (f" · {elapsed(seconds)}", "dim"))
        line.truncate(options.max_width, overflow="ellipsis")
        yield line
        for detail in status.detail:
            text = Text.assemble(("  │ ", "dim"), (detail, "dim"))
            text.truncate(options.max_width, overflow="ellipsis")
            yield text
