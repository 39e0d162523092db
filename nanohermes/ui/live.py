"""The REPL's rich renderer: streamed Markdown, one line per tool call, a usage line per turn."""

from __future__ import annotations

import time

from nanohermes import events as ev
from nanohermes.ui.escape import escape
from nanohermes.ui.plain import nested_line, tool_line, usage_line

MIN_RENDER_INTERVAL_S = 0.1  # re-parsing the whole answer as Markdown on every delta is quadratic
RENDER_COST_FACTOR = 3  # ...so a slow render (a long answer) also spaces out the next ones


class RichRenderer:
    def __init__(self, console):
        self.console = console
        self._buffer: list[str] = []
        self._live = None
        self._next_render = 0.0

    def __call__(self, event) -> None:
        if isinstance(event, ev.TextDelta):
            self._buffer.append(event.text)
            self._update_live()
        elif isinstance(event, ev.StreamRestarted):
            self._discard_stream()
        elif isinstance(event, ev.AssistantMessageDone):
            self.end_stream()
        elif isinstance(event, ev.ToolStarted):
            self.end_stream()
            self.console.print(f"[cyan]→[/] {escape(tool_line(event.name, event.arguments))}", highlight=False)
        elif isinstance(event, ev.ToolFinished):
            mark = "[green]✓[/]" if event.ok else "[red]✗[/]"
            self.console.print(f"  {mark} [dim]{escape(event.summary)}[/]", highlight=False)
        elif isinstance(event, ev.Notice):
            self.end_stream()
            style = "yellow" if event.level == "warning" else "dim"
            self.console.print(f"[{style}]· {escape(event.text)}[/]", highlight=False)
        elif isinstance(event, ev.Usage):
            self.console.print(f"[dim]{usage_line(event)}[/]", highlight=False)
        elif isinstance(event, ev.SubagentEvent) and (line := nested_line(event)) is not None:
            self.end_stream()  # a helper's tool lines, indented and dimmed under the parent's call
            self.console.print(f"[dim]{escape(line)}[/]", highlight=False)

    def _update_live(self) -> None:
        if not self.console.is_terminal:
            return  # non-TTY: print once at the end, no cursor games
        now = time.monotonic()
        if now < self._next_render:
            return
        from rich.markdown import Markdown

        if self._live is None:
            from rich.live import Live

            self._live = Live(console=self.console, auto_refresh=False, vertical_overflow="visible")
            self._live.start()
        self._live.update(Markdown("".join(self._buffer)), refresh=True)
        spent = time.monotonic() - now
        self._next_render = time.monotonic() + max(MIN_RENDER_INTERVAL_S, RENDER_COST_FACTOR * spent)

    def _discard_stream(self) -> None:
        self._buffer = []
        if self._live is not None:
            from rich.text import Text

            self._live.update(Text(""), refresh=True)
            self._live.stop()
            self._live = None
        self.console.print("[dim]· retrying; the reply starts again[/]")

    def end_stream(self) -> None:
        """Finish the current streamed message (also after Ctrl-C)."""
        text = "".join(self._buffer)
        self._buffer = []
        self._next_render = 0.0
        if self._live is not None:
            from rich.markdown import Markdown

            self._live.update(Markdown(text), refresh=True)
            self._live.stop()
            self._live = None
        elif text.strip():
            from rich.markdown import Markdown

            self.console.print(Markdown(text))
