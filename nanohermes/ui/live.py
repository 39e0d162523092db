"""The REPL's rich renderer of run events: streamed Markdown printed once (ui/mdstream.py), a
live status while the model or a tool works (ui/progress.py), one line per tool call with a
command's output tail and an applied edit's diff (ui/toolview.py).
"""

from __future__ import annotations

import time
from contextlib import contextmanager

from nanohermes import events as ev
from nanohermes.calls import WRITING_TOOLS
from nanohermes.slash.changes import unified_diff
from nanohermes.ui.escape import neutralize
from nanohermes.ui.mdstream import MarkdownStream, open_fence
from nanohermes.ui.plain import nested_line
from nanohermes.ui.progress import LiveArea
from nanohermes.ui.toolview import (
    Line,
    Ran,
    call_text,
    coloured_diff,
    interrupted_line,
    output_tail,
    result_line,
)

APPLIED_DIFF_LINES = 40  # an applied change on screen; /diff shows the rest
MORE_OUTPUT_NOTE = " · Ctrl-O or /show pages all of it"
WAITING = "waiting for the model"
ANSWERING = "answering"
COMPACTING = "compacting context…"


def to_text(line: Line):
    from rich.text import Text

    return Text.assemble(*((text, style or "") for text, style in line))


class RichRenderer:
    def __init__(self, console, code_theme: str = "monokai"):
        self.console = console
        self.code_theme = code_theme  # the pygments style of code blocks (ui/theme.py: readable on the background)
        self.area = LiveArea(console)
        self.md: MarkdownStream | None = None
        self.calls: dict[str, tuple[str, str, float]] = {}  # call id -> (tool, arguments, started)
        self.running: str | None = None
        self.previewed: set[str] = set()  # calls whose diff the approval question showed
        self.declined: dict[str, str] = {}  # calls the user said no to, with their reason
        self.checkpoints = None  # set by the REPL: where an applied edit's diff comes from
        self.ran: list[Ran] = []  # the calls (and `!commands`) /show can page, oldest first
        self._before_summary = None
        self._held: list[ev.Notice] | None = None
        self.reply = ev.ReplyOnScreen()  # what is on screen of the reply being streamed
        self.carried = ""  # its unfinished last line, held back while a notice was printed

    def __call__(self, event) -> None:
        handler = getattr(self, f"_on_{type(event).__name__}", None)
        if handler is not None:
            handler(event)

    def say_lines(self, lines: list[Line]) -> None:
        for line in lines:
            self.area.print(to_text(line))

    # -- the answer ----------------------------------------------------------------------

    def _on_TextDelta(self, event: ev.TextDelta) -> None:
        before = self.reply.shown if self.md is None else ""  # joined only when a stream starts: linear
        text, differs = self.reply.add(event.text)  # a retried reply: only what it adds
        if differs:
            self.carried = ""
            self.area.print(to_text([("· the retried reply differs from the text above; here it is whole", "dim")]))
        if not text:
            return
        if self.md is None:
            text = self._new_stream("" if differs else before) + text
        self.md.feed(text)  # one feed: each renders, and the next one within 50 ms waits for another
        self.area.set_tail(self.md.live_lines)
        status = self.area.status
        if status is not None and status.label == WAITING:
            self.area.set_status(ANSWERING, status.started)

    def _new_stream(self, before: str) -> str:
        """A new Markdown stream for the reply, and the text it starts with: one started again
        after a notice in the middle of the reply (a retry's) goes on inside the code block
        `before` left open, from the line that was held back."""
        self.md = MarkdownStream(self.console, self._print_segments, self.code_theme)
        carried, self.carried = self.carried, ""
        return (fence + "\n" if (fence := open_fence(before)) else "") + carried

    def _print_segments(self, lines: list) -> None:
        from rich.segment import SegmentLines

        if self.md is not None:  # the live area, redrawn below the print, must not show these lines again
            self.area.tail = self.md.live_lines
        self.area.print(SegmentLines(lines, new_lines=True))

    def _on_StreamRestarted(self, event) -> None:
        """The retry's notice said it; what the retried reply repeats is not printed again."""
        self.reply.restart()

    def _on_AssistantMessageDone(self, event) -> None:
        self.end_stream()
        self.reply.new_reply()

    def end_stream(self, keep_line: bool = False) -> None:
        """Print what is left of the streamed message (also after Ctrl-C); with `keep_line`
        (a notice in the middle of it) an unfinished last line waits for the rest."""
        if self.md is None and self.carried and not keep_line:  # the reply ended on the line that waited
            start = self._new_stream(self.reply.shown)
            self.md.feed(start)
        if self.md is not None:
            self.carried = self.md.finish(keep_line)
            self.md = None
        self.area.set_tail([])

    # -- waiting ---------------------------------------------------------------------------

    def _on_RequestStarted(self, event) -> None:
        self.reply.new_reply()
        self.area.set_status(WAITING)

    def _on_SummaryStarted(self, event) -> None:
        self._before_summary = self.area.status
        self.area.set_status(COMPACTING)

    def _on_SummaryFinished(self, event) -> None:
        before, self._before_summary = self._before_summary, None
        if before is not None:
            self.area.set_status(before.label, before.started)
        else:
            self.area.clear_status()

    # -- tools -----------------------------------------------------------------------------

    def _on_ToolStarted(self, event: ev.ToolStarted) -> None:
        self.end_stream()
        self.calls[event.call_id] = (event.name, event.arguments, time.monotonic())
        self.running = event.call_id
        self.area.set_status(call_text(event.name, event.arguments))

    def _on_ToolProgress(self, event: ev.ToolProgress) -> None:
        self.area.set_detail(event.text)

    def _on_ToolFinished(self, event: ev.ToolFinished) -> None:
        _, arguments, _ = self.calls.pop(event.call_id, (event.name, "", 0.0))
        self.running = next(iter(self.calls), None)  # reads run side by side: the next one still running
        if self.running is None:
            self.area.clear_status()
        else:
            name, still, started = self.calls[self.running]
            self.area.set_status(call_text(name, still), started)
        self.ran.append(Ran(call_text(event.name, arguments), event.call_id))
        line = result_line(event, arguments, self.declined.pop(event.call_id, None))
        self.say_lines([line, *output_tail(event, MORE_OUTPUT_NOTE), *self._applied_diff(event)])

    def _applied_diff(self, event: ev.ToolFinished) -> list[Line]:
        if event.name not in WRITING_TOOLS or not event.facts.changed or self.checkpoints is None:
            return []
        if event.call_id in self.previewed:
            self.previewed.discard(event.call_id)
            return []  # the question showed this diff a moment ago: once is enough
        change = self.checkpoints.for_call(event.call_id)
        if change is None or not change.kept:
            return []
        try:
            before = (self.checkpoints.content(change.before) or b"").decode("utf-8", "replace")
            after = self.checkpoints.content(change.after).decode("utf-8", "replace")
        except OSError:  # the kept contents went missing: /diff says so; this line shows nothing
            return []
        return coloured_diff(unified_diff(before, after, change.shown), APPLIED_DIFF_LINES, "; /diff shows all")

    # -- the rest --------------------------------------------------------------------------

    @contextmanager
    def holding_notices(self):
        """Notices are collected, not printed, while inside (a command words the outcome itself)."""
        self._held = held = []
        try:
            yield held
        finally:
            self._held = None

    def _on_SubagentEvent(self, event: ev.SubagentEvent) -> None:
        """A helper's (sub-agent's) tool calls, nested and dimmed under the parent's call."""
        line = nested_line(event)
        if line is not None:
            self.end_stream()
            self.say_lines([[(neutralize(line), "dim")]])

    def _on_CacheMiss(self, event: ev.CacheMiss) -> None:
        from nanohermes.cost import miss_line

        self._on_Notice(ev.Notice(miss_line(event)))

    def _on_Notice(self, event: ev.Notice) -> None:
        if self._held is not None:
            self._held.append(event)
            return
        self.end_stream(keep_line=True)
        self.area.print(to_text([(f"· {neutralize(event.text)}", "yellow" if event.level == "warning" else "dim")]))

    def pause(self) -> None:
        """Before a question: the live area leaves the terminal to the prompt."""
        self.end_stream()
        self.area.pause()

    def resume(self) -> None:
        self.area.resume()

    def end_turn(self, interrupted: bool = False) -> None:
        """The turn (or a command) is over: flush the answer, say which tool was cut, stop the live area.
        A line held back at a retry's notice that no retried reply went on with belongs to the dead
        attempt: it is not printed under the notices."""
        if self.reply.replaying:
            self.carried = ""
        self.end_stream()
        if interrupted and self.running in self.calls:
            name, arguments, started = self.calls.pop(self.running)
            self.say_lines([interrupted_line(name, arguments, time.monotonic() - started)])
        self.running = None
        self.area.stop()
