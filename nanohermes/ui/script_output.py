"""What `-p` writes for scripts: `text` (the answer streamed to stdout, progress on stderr),
`json` (one object at the end) or `stream-json` (every run event as one JSON line).

The three are renderers of the same events as the REPL's; the CLI decides the exit code and
hands each the final result. The schemas are documented in docs/scripting.md.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict, is_dataclass
from typing import TextIO

from nanohermes import events as ev
from nanohermes.ui.plain import PlainRenderer

OUTPUT_FORMATS = ("text", "json", "stream-json")
# A reply's text is held back until it is this long or ends without a tool call: the short
# "Let me look." a model writes before a tool call goes to stderr, so stdout stays the bare
# answer, while a long answer still streams. (A longer preamble lands on stdout too.)
ANSWER_HOLD_CHARS = 400
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def event_dict(event) -> dict:
    """`TextDelta("hi")` -> {"type": "text_delta", "text": "hi"}: every event, whatever its fields."""
    if isinstance(event, ev.SubagentEvent):  # the helper's own event, typed like the parent's
        tag = (
            {"tag": event.tag} if event.tag else {}
        )  # a helper in a worktree of its own: its name, as they run at once
        return {"type": "subagent_event", "label": event.label, **tag, "event": event_dict(event.event)}
    fields = asdict(event) if is_dataclass(event) else {}
    return {"type": _CAMEL.sub("_", type(event).__name__).lower(), **fields}


class ToolCallLog:
    """The tool calls of a run, from its ToolStarted/ToolFinished events, for the final result."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self._open: dict[str, dict] = {}

    def see(self, event) -> None:
        if isinstance(event, ev.ToolStarted):
            entry = {"id": event.call_id, "name": event.name, "arguments": event.arguments, "ok": None, "summary": ""}
            self.calls.append(entry)
            self._open[event.call_id] = entry
        elif isinstance(event, ev.ToolFinished) and event.call_id in self._open:
            self._open.pop(event.call_id).update(ok=event.ok, summary=event.summary)


class TextOutput(PlainRenderer):
    """`text`: progress on stderr as before; the answer on stdout as it streams."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None):
        super().__init__(err)
        self.out = out or sys.stdout
        self.log = ToolCallLog()
        self.reply = ev.ReplyOnScreen()  # what stdout shows of the reply being streamed
        self._held: list[str] = []  # the reply's start, held back until ANSWER_HOLD_CHARS
        self._held_chars = 0
        self._shown = False  # some of the reply is on stdout

    def __call__(self, event) -> None:
        self.log.see(event)
        if isinstance(event, ev.TextDelta):
            self._held.append(event.text)
            self._held_chars += len(event.text)
            self._show(final=False)
        elif isinstance(event, ev.StreamRestarted):
            self.reply.restart()  # what is on stdout stays: a retry that repeats it prints only what is new
            self._held, self._held_chars = [], 0
        elif isinstance(event, ev.AssistantMessageDone) and not event.has_tool_calls:
            self._show(final=True)
        elif isinstance(event, ev.AssistantMessageDone):
            if self._shown:  # already on stdout; end its line rather than repeat it on stderr
                self._write("\n")
            else:
                super().__call__(event)
            self.reply.new_reply()
            self._held, self._held_chars, self._shown = [], 0, False
        else:
            super().__call__(event)

    def _show(self, final: bool) -> None:
        if not final and not self._shown and self._held_chars < ANSWER_HOLD_CHARS:
            return
        added, differs = self.reply.add("".join(self._held))  # each delta joined once: linear in the reply
        self._held, self._held_chars = [], 0
        if differs:
            self._say("[warning] the reply restarted after a dropped connection; stdout repeats part of it")
            self._write("\n" + added)
        else:
            self._write(added)
        self._shown = self._shown or bool(added)

    def _write(self, text: str) -> None:
        if text:
            self.out.write(text)
            self.out.flush()

    def started(self, session: dict, lines: list[str]) -> None:
        for line in lines:
            self._say(line)

    def finished(self, result: dict) -> None:
        if result["stop_reason"] in (None, ev.StopCode.NEEDS_APPROVAL) or self._shown:
            self._write("\n")  # the answer's line ends, as print() ended it before streaming

    def failed(self, error: dict) -> None:
        if self._shown:
            self._write("\n")  # the CLI says what failed on stderr


class JsonOutput:
    """`json`: progress on stderr as in text mode; one result object on stdout at the end."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None):
        self.out = out or sys.stdout
        self.progress = PlainRenderer(err)
        self.log = ToolCallLog()

    def __call__(self, event) -> None:
        self.log.see(event)
        self.progress(event)

    def started(self, session: dict, lines: list[str]) -> None:
        for line in lines:
            print(line, file=self.progress.err, flush=True)

    def finished(self, result: dict) -> None:
        self.out.write(json.dumps(result, ensure_ascii=False) + "\n")
        self.out.flush()

    failed = finished


class StreamJsonOutput:
    """`stream-json`: a session line, every event as it happens, then the result, one JSON
    object per line on stdout. Nothing on stderr but the CLI's final error or stop line.
    The session line is always first: what is said while the session is built (a warning about
    the configuration) waits for it."""

    def __init__(self, out: TextIO | None = None):
        self.out = out or sys.stdout
        self.log = ToolCallLog()
        self._early: list[dict] | None = []  # None once the session line is out

    def __call__(self, event) -> None:
        self.log.see(event)
        inner = event.event if isinstance(event, ev.SubagentEvent) else event  # a helper's progress too
        if isinstance(inner, ev.LIVE_PROGRESS):
            return
        if self._early is not None:
            self._early.append(event_dict(event))
        else:
            self._line(event_dict(event))

    def started(self, session: dict, lines: list[str]) -> None:
        self._line(session)
        self._flush_early()

    def finished(self, result: dict) -> None:
        self._flush_early()  # a run that failed before its session: what was said, then the error
        self._line(result)

    failed = finished

    def _flush_early(self) -> None:
        early, self._early = self._early or [], None
        for line in early:
            self._line(line)

    def _line(self, obj: dict) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()


def make_output(output_format: str):
    return {"text": TextOutput, "json": JsonOutput, "stream-json": StreamJsonOutput}[output_format]()


def result_dict(
    result: ev.TurnResult,
    session: str,
    tool_calls: list[dict],
    stop_reason: str | None,
    message: str | None,
    exit_code: int,
) -> dict:
    """The `result` object (json's only output, stream-json's last line)."""
    usage = None
    if result.usage is not None:
        usage = {"cached_tokens": None, **asdict(result.usage)}  # cached_tokens: null unless the server says
    return {
        "type": "result",
        "answer": "" if result.stop_code == ev.StopCode.INTERRUPTED else result.final_text,
        "finished": stop_reason is None,
        "stop_reason": stop_reason,
        "message": message,
        "exit_code": exit_code,
        "session": session,
        "steps": result.steps,
        "usage": usage,
        "tool_calls": tool_calls,
        "refused": list(result.cannot_ask),
    }


def error_dict(message: str, exit_code: int, session: str | None) -> dict:
    return {"type": "error", "message": message, "exit_code": exit_code, "session": session}


def start_lines(runtime) -> tuple[dict, list[str]]:
    """The session line stream-json starts with, and the lines text and json print on stderr."""
    from nanohermes.ui.recap import recap_lines, workspace_note

    session, config = runtime.session, runtime.config
    resumed = session.state.total_messages > 0
    line = {
        "type": "session",
        "name": session.name,
        "resumed": resumed,
        "model": config.model,
        "mode": config.mode,
        "workspace": str(config.workspace),
        "sandbox": runtime.sandbox_summary,
    }
    from nanohermes.ui.sandbox_view import network_words, sandbox_line

    brief = sandbox_line(runtime.sandbox_backend, network_words(runtime.sandbox), config.mode)
    sandbox = f"· {brief}"
    if not resumed:
        hint = f"· session {session.name} (resume with --session {session.name})"
        return line, [hint, sandbox] if session.generated else [sandbox]
    note = workspace_note(session.state.workspace, config.workspace)
    lines = [
        f"· resumed session {session.name} ({session.state.total_messages} messages)",  # the count sessions lists
        *recap_lines(session.state.messages),
    ]
    return line, lines + ([note] if note else []) + [sandbox]
