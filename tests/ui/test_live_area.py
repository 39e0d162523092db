"""The live area against rich's refresh thread, played into a pyte screen (what a terminal
would keep in its scrollback)."""

from __future__ import annotations

import io
import random
import time

import pyte
from rich.console import Console
from rich.live import Live
from rich.segment import Segment

from nanohermes.ui.progress import LiveArea


def test_a_refresh_between_a_prints_start_and_end_leaves_no_live_line_behind(monkeypatch):
    # rich holds the Live's lock only while a print moves the cursor up over the live area; a
    # refresh in the gap drew a live area of another height, and its extra lines stayed on
    # the screen, to be printed again later (a paragraph of a streamed answer twice, under load).
    # The gap is widened here so that the refresh thread (100 a second) always falls into it.
    widened = Live.process_renderables

    def slow(self, renderables):
        out = widened(self, renderables)
        time.sleep(0.02)
        return out

    monkeypatch.setattr(Live, "process_renderables", slow)
    monkeypatch.setattr("nanohermes.ui.progress.REFRESH_PER_SECOND", 100)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, force_interactive=True, width=80, height=30, color_system=None)
    area = LiveArea(console)
    area.set_status("answering")
    heights = random.Random(1)
    for i in range(40):
        area.set_tail([[Segment(f"tail {i} line {j}")] for j in range(heights.randint(1, 8))])
        area.print(f"printed {i}")
    area.stop()
    screen = pyte.HistoryScreen(80, 30, history=10_000)
    pyte.Stream(screen).feed(out.getvalue().replace("\n", "\r\n"))
    lines = ["".join(char.data for char in row.values()).rstrip() for row in screen.history.top]
    lines += [line.rstrip() for line in screen.display]
    assert [line for line in lines if line.startswith("tail")] == []
    assert [line for line in lines if line.startswith("printed")] == [f"printed {i}" for i in range(40)]
