"""The plain renderer of run events, for `-p` (answer on stdout, progress on stderr), and the
words both front ends use for usage and for a turn that stopped early."""

from __future__ import annotations

import sys
from typing import TextIO

from nanohermes import events as ev
from nanohermes.calls import ToolCall, describe_call
from nanohermes.cost import cost_text, miss_line
from nanohermes.text import neutralize

TOOL_LINE_CHARS = 100  # one tool line on screen


def tool_line(name: str, arguments: str) -> str:
    """`read_file path=src/x.py`: the call as the context engine names it, cut for one line."""
    return describe_call(ToolCall.of(name, arguments), TOOL_LINE_CHARS)


NESTED_PREFIX = "  ┆ "  # a helper agent's lines, under the parent's `task` call


def nested_line(event: ev.SubagentEvent) -> str | None:
    """A helper agent's event as one indented line: its tool calls and results, notices and
    usage (its text is not shown: its answer comes back as the parent's tool result)."""
    inner = event.event
    prefix = f"{NESTED_PREFIX}{event.tag} " if event.tag else NESTED_PREFIX  # helpers side by side: whose line
    if isinstance(inner, ev.ToolStarted):
        return f"{prefix}→ {tool_line(inner.name, inner.arguments)}"
    if isinstance(inner, ev.ToolFinished):
        return f"{prefix}  {'✓' if inner.ok else '✗'} {inner.summary}"
    if isinstance(inner, ev.Notice):
        return f"{prefix}· {inner.text}"
    if isinstance(inner, ev.Usage):
        return f"{NESTED_PREFIX}helper {event.label!r}: {usage_line(inner)}"
    return None


def usage_line(usage: ev.Usage) -> str:
    """`tokens this turn: 12,400 in (91 % cached), 310 out (3 requests)`; the cached share only
    when the provider reports it."""
    if not usage.reported:
        return f"{usage.requests} request(s); the server reported no token usage"
    cached = ""
    if usage.cached_tokens is not None and usage.prompt_tokens:
        cached = f" ({100 * usage.cached_tokens / usage.prompt_tokens:.0f} % cached)"
    missing = f", {usage.unreported} without a usage report" if usage.unreported else ""
    return (
        f"tokens this turn: {usage.prompt_tokens:,} in{cached}, {usage.completion_tokens:,} out "
        f"({usage.requests} request(s){missing}); cost {cost_text(usage)}"
    )


class PlainRenderer:
    """For `-p`: only the final answer goes to stdout (printed by the CLI); the rest to stderr."""

    def __init__(self, err: TextIO | None = None):
        self.err = err or sys.stderr
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
            self._say(f"→ {tool_line(event.name, event.arguments)}")
        elif isinstance(event, ev.ToolFinished):
            from nanohermes.ui.toolview import command_outcome, failed

            outcome = f" · {command_outcome(event.facts)[0]}" if event.facts.exit_code is not None else ""
            outcome += f" · sandbox blocked: {event.facts.blocked}" if event.facts.blocked else ""
            self._say(f"  {'✗' if failed(event) else '✓'} {event.summary}{outcome}")  # a failed command is a ✗
        elif isinstance(event, ev.Notice):
            self._say(f"[{event.level}] {event.text}" if event.level != "info" else f"· {event.text}")
        elif isinstance(event, ev.CacheMiss):
            self._say(f"· {miss_line(event)}")
        elif isinstance(event, ev.Usage):
            self._say(usage_line(event))
        elif isinstance(event, ev.SubagentEvent) and (line := nested_line(event)) is not None:
            self._say(line)

    def _say(self, text: str) -> None:
        """Every progress line of `-p` (a helper's description and arguments, the resume recap, a
        summary's memories, a server's error): its control characters shown, never executed."""
        print(neutralize(text), file=self.err, flush=True)
