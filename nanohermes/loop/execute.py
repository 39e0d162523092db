"""Running a reply's tool calls, in order: the repeat guard first, then the approvals, then the
tool; each result joins the history with its facts, its full output kept for `recall`. The
front ends see a start and a finish event per call (a call Ctrl-C stopped finishes too, with
what it kept); the time a call waited for an approval is not counted as its own."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from nanohermes import events as ev
from nanohermes.calls import ResultFacts
from nanohermes.errors import ToolInterrupted
from nanohermes.events import StopCode
from nanohermes.loop.approvals import Approvals
from nanohermes.loop.guard import LOOK_TOOLS, RepeatGuard
from nanohermes.loop.transcript import Transcript
from nanohermes.loop.turn import StopTurn, Turn
from nanohermes.prompt.mentions import already_attached
from nanohermes.provider import AssistantTurn
from nanohermes.signals import deferred
from nanohermes.text import valid_unicode
from nanohermes.tools import Tool, ToolContext, ToolResult, dispatch

SUMMARY_LINE_CHARS = 120  # the one line a finished call shows


class ToolRunner:
    def __init__(self, tools: dict[str, Tool], approvals: Approvals, emit: Callable[[object], None]):
        self.tools, self.approvals, self.emit = tools, approvals, emit
        self.guard = RepeatGuard()

    def new_turn(self) -> None:
        """A new user request: old repeats don't count, and no call was refused unasked yet."""
        self.guard.reset()
        self.approvals.unasked.clear()

    def schemas(self, lean: bool, recall_offered: bool) -> list[dict]:
        """What the model is offered: the mode's tools (plan mode: read-only ones), fixed for a
        session but for a mode switch and `recall`, which joins once, at the first compaction
        (before that it has nothing to return, and small models call whatever is on offer). A
        small window gets the lean set (context/budget.py), decided when the window is learned."""
        offered = self.approvals.offered(list(self.tools.values()))
        return [t.schema(lean) for t in offered if (t.name != "recall" or recall_offered) and (t.lean or not lean)]

    def run(self, turn: Turn, reply: AssistantTurn, ctx: ToolContext, transcript: Transcript) -> None:
        """Run every call and add each result to `transcript` with its facts; StopTurn when the model
        is stuck in a loop. On Ctrl-C the Agent answers the calls left without a result."""
        self.emit(ev.AssistantMessageDone(reply.content, True))
        for call in reply.tool_calls:
            call_id, name, arguments = call["id"], call["function"]["name"], call["function"]["arguments"]
            self.emit(ev.ToolStarted(call_id, name, ctx.redactor.text(arguments)))  # shown to a client
            result, seconds = self._run_one(turn, ctx, call_id, name, arguments)
            if self._attached(turn, transcript, name, result):  # the same text is in the request: not twice
                result = replace(result, content=already_attached(result.content))
            if result.facts.changed or (not result.ok and name not in LOOK_TOOLS):  # a failed read is no news
                self.guard.forget_looks()
            elif result.ok and (note := self.guard.same_look(name, arguments, result.content)):
                turn.went_round()
                result = replace(result, content=f"{result.content}\n{note}", full=f"{result.full}\n{note}")
            transcript.add_result(
                {"role": "tool", "tool_call_id": call_id, "content": result.content}, result.facts.to_dict()
            )
            turn.ran(name, result.facts.changed)
            ctx.outputs.add(call_id, result.content, result.full, result.facts)
            summary = _first_line(result.content)
            self.emit(ev.ToolFinished(call_id, name, summary, result.ok, seconds, result.facts))
        if self.guard.stuck or turn.hopeless:  # asked for its answer, it went round again: nothing new will come
            raise StopTurn(StopCode.REPEATING)

    @staticmethod
    def _attached(turn: Turn, transcript: Transcript, name: str, result: ToolResult) -> bool:
        """A read_file showing a file as attached to the request, which still holds it."""
        attached = name == "read_file" and result.ok and result.content in turn.attached.values()
        return attached and transcript.still_attached(result.content)

    def _run_one(self, turn: Turn, ctx: ToolContext, call_id: str, name: str, arguments: str):
        """(the result, the seconds it took to run)."""
        refusal = self.guard.see(name, arguments)
        if refusal is not None:
            turn.went_round(refused=True)
        tool = self.tools.get(name)
        ctx = replace(ctx, call_id=call_id, progress=lambda text: self._progress(ctx, call_id, name, text))
        if refusal is None and tool is not None:
            refusal = self.approvals.refusal(tool, arguments, ctx)
        if refusal is not None:
            return ToolResult(refusal, refusal, ok=False), 0.0
        if tool is not None:  # what the tool finds it must ask about while it runs (a local address)
            ctx = replace(ctx, confirm=lambda preview: self.approvals.confirm(tool, preview))
        started = time.monotonic()
        try:
            result = dispatch(ctx, self.tools, name, arguments)
        except ToolInterrupted as stop:  # the Agent answers the call with stop.answer
            try:
                self._keep_interrupted(ctx, call_id, name, stop, time.monotonic() - started)
            except Exception:  # a front end already gone (an editor that closed) must not cost the call its answer
                pass
            raise
        return result, time.monotonic() - started

    def _progress(self, ctx: ToolContext, call_id: str, name: str, text: str) -> None:
        """A running tool's latest lines reach a client (an editor over ACP, the live area) redacted."""
        self.emit(ev.ToolProgress(call_id, name, ctx.redactor.text(valid_unicode(text))))

    def _keep_interrupted(self, ctx: ToolContext, call_id: str, name: str, stop: ToolInterrupted, seconds: float):
        """What a stopped call kept, stored like any output (recall, /show) and shown as its finish."""
        facts = stop.facts if isinstance(stop.facts, ResultFacts) else ResultFacts(interrupted=True)
        facts = replace(facts, interrupted=True, tail=ctx.redactor.text(valid_unicode(facts.tail)))
        with deferred():  # a second Ctrl-C must not tear the session's record of it
            full = ctx.redactor.text(valid_unicode(stop.full))
            ctx.outputs.add(call_id, ctx.redactor.text(valid_unicode(stop.answer)), full, facts)
        self.emit(ev.ToolFinished(call_id, name, "interrupted", False, seconds, facts))


def _first_line(text: str, limit: int = SUMMARY_LINE_CHARS) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(empty)"
    return line if len(line) <= limit else line[: limit - 1] + "…"
