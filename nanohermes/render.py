"""Renderers of run events: plain text for `-p` (answer on stdout, progress on stderr) and rich
for the REPL. Both see the same events; neither knows about the loop."""

from __future__ import annotations

import sys
from typing import TextIO

from nanohermes import events as ev


def describe_call(name: str, arguments: str, limit: int = 100) -> str:
    """`read_file path=src/x.py` style one-liner, the same wording the context engine uses."""
    from nanohermes.context.describe import describe_call as describe, parse_tool_call

    text = describe(parse_tool_call({"function": {"name": name, "arguments": arguments}}))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def usage_line(usage: ev.Usage) -> str:
    if not usage.reported:
        return f"{usage.requests} request(s); the server reported no token usage"
    return f"tokens this turn: {usage.prompt_tokens:,} in, {usage.completion_tokens:,} out ({usage.requests} request(s))"


class PlainRenderer:
    """For `-p`: only the final answer goes to stdout (printed by the CLI); the rest to stderr."""

    def __init__(self, err: TextIO | None = None, verbose: bool = True):
        self.err = err or sys.stderr
        self.verbose = verbose
        self._text: list[str] = []

    def __call__(self, event) -> None:
        if isinstance(event, ev.TextDelta):
            self._text.append(event.text)
        elif isinstance(event, ev.StreamRestarted):
            self._text = []
        elif isinstance(event, ev.AssistantMessageDone):
            if event.has_tool_calls and event.content.strip():
                self._say(event.content.strip())
            self._text = []
        elif isinstance(event, ev.ToolStarted):
            self._say(f"→ {describe_call(event.name, event.arguments)}")
        elif isinstance(event, ev.ToolFinished):
            self._say(f"  {'✓' if event.ok else '✗'} {event.summary}")
        elif isinstance(event, ev.Notice):
            self._say(f"[{event.level}] {event.text}" if event.level != "info" else f"· {event.text}")
        elif isinstance(event, ev.Usage):
            self._say(usage_line(event))

    def _say(self, text: str) -> None:
        if self.verbose:
            print(text, file=self.err, flush=True)
