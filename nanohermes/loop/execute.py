"""Running a reply's tool calls, in order: the repeat guard first, then the turn's coach (a test file
when the tests are the spec), the PreToolUse hooks and the approvals, then the tool (and its PostToolUse
hooks); each result joins the history with its
facts, its full output kept for `recall`. The front ends see a start and a finish event per call
(a call Ctrl-C stopped finishes too, with what it kept); the time a call waited for an approval
is not counted as its own."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import NamedTuple

from nanohermes import events as ev
from nanohermes.calls import ResultFacts
from nanohermes.errors import Terminated, ToolInterrupted
from nanohermes.events import StopCode
from nanohermes.hooks import AfterTool, Hooks, ToolVerdict
from nanohermes.loop import changes
from nanohermes.loop.approvals import Approvals
from nanohermes.loop.coach.protocol import Ran
from nanohermes.loop.guard import LOOK_TOOLS, RepeatGuard
from nanohermes.loop.together import Together
from nanohermes.loop.transcript import Transcript
from nanohermes.loop.turn import StopTurn, Turn
from nanohermes.prompt.mentions import already_attached
from nanohermes.provider import AssistantTurn
from nanohermes.signals import deferred
from nanohermes.text import head_tail_text, valid_unicode
from nanohermes.tools import Tool, ToolContext, ToolResult, dispatch

SUMMARY_LINE_CHARS = 120  # the one line a finished call shows
HOOK_STOPPED_CALL = "not run: a PreToolUse hook ({command}) stopped the session here; the user was told why."
HOOK_STOPPED_BEFORE = "not run: a {event} hook stopped the session before this {name} call."
REWRITTEN = "[a PreToolUse hook rewrote this call to: {arguments}]"
REWRITTEN_CHARS = 600  # the rewritten arguments the model is shown: enough to see what changed
# Read-only calls of one reply that wait on another machine (a page, an MCP server) run this many
# at a time: a reply rarely has more than five, and the network is shared with everything else.
READ_WORKERS = 4
WAITING_READS = frozenset({"web_fetch", "mcp"})
# Local reads (rg, the disk, numbering lines) are CPU work, and rg already uses every core: at most
# one per core. Measured on 2 cores, 5 greps of one reply: 1.30x the time one by one with 4 at once,
# 0.87x with 2 (scripts/bench_parallel_reads.py).
LOCAL_READ_WORKERS = max(1, min(READ_WORKERS, os.cpu_count() or 1))
READS, APART = "reads", "apart"  # the kinds of calls that run side by side (Call.together)


class ToolRunner:
    def __init__(
        self, tools: dict[str, Tool], approvals: Approvals, emit: Callable[[object], None], hooks=None, apart: int = 1
    ):
        """`hooks`: PreToolUse's say goes to the approvals, PostToolUse's joins the result (None: no hooks);
        `apart`: how many calls that work apart run at once (task_parallel)."""
        self.tools, self.approvals, self.emit, self.apart_workers = tools, approvals, emit, apart
        self.hooks = hooks if hooks is not None else Hooks()
        self.guard = RepeatGuard()
        self._open: dict[str, str] = {}  # call id -> tool name: calls of the reply started and not finished

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

    def run(self, turn: Turn, reply: AssistantTurn, ctx: ToolContext, transcript: Transcript) -> list[Ran]:
        """Run every call and add each result to `transcript` with its facts, in the model's order; what
        each call came to, for the turn's coach. StopTurn when the model is stuck in a loop. On Ctrl-C
        the Agent answers the calls left without a result; each call started here is finished (as
        interrupted) first."""
        self.emit(ev.AssistantMessageDone(reply.content, True))
        calls = [Call(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in reply.tool_calls]
        self._open = {}
        ran: list[Ran] = []
        try:
            for group in self._groups(calls):
                prepared = [self._prepare(turn, ctx, call) for call in group]  # in order, one by one
                with contextlib.closing(self._outcomes(turn, prepared)) as outcomes:
                    for ready, (result, seconds) in zip(prepared, outcomes, strict=True):
                        ran.append(self._finish(turn, ctx, ready, result, seconds, transcript))
        except (KeyboardInterrupt, Terminated):
            with deferred():  # what the front ends show stays coherent: every start has its finish
                self._finish_open()
            raise
        if (stop := turn.hook_stop) is not None:  # `continue: false`: no request more this turn
            raise StopTurn(StopCode.HOOK_STOPPED, event=stop.event, command=stop.command, reason=stop.reason)
        if self.guard.stuck:  # the same calls again and again: nothing new will come
            raise StopTurn(StopCode.REPEATING)
        return ran

    def _finish_open(self) -> None:
        """The calls a stop left started and unfinished, shown as interrupted (the Agent answers them)."""
        for call_id, name in list(self._open.items()):
            try:
                self.emit(ev.ToolFinished(call_id, name, "interrupted", False, 0.0, ResultFacts(interrupted=True)))
            except Exception:  # a front end already gone (an editor that closed): the history matters more
                pass
        self._open.clear()

    def _groups(self, calls: list[Call]) -> list[list[Call]]:
        """Runs of consecutive calls of one kind that may run together — read-only ones, or ones
        that work apart (helpers in worktrees of their own) — every other call alone."""
        groups: list[list[Call]] = []
        for call in calls:
            call = call._replace(together=self._kind(call))
            if call.together and groups and groups[-1][-1].together == call.together:
                groups[-1].append(call)
            else:
                groups.append([call])
        return groups

    def _kind(self, call: Call) -> str:
        tool = self.tools.get(call.name)
        if tool is None:
            return ""
        if tool.read_only:
            return READS
        return APART if tool.apart is not None and tool.apart(changes.arguments_of(call.arguments)) else ""

    def _prepare(self, turn: Turn, ctx: ToolContext, call: Call) -> _Ready:
        """A call's start: shown, then the repeat guard, the coach, then the approvals (which may ask)."""
        self._open[call.id] = call.name  # first: a Ctrl-C just after the start shown still finishes it
        self.emit(ev.ToolStarted(call.id, call.name, ctx.redactor.text(call.arguments)))  # shown to a client
        refusal = self.guard.see(call.name, call.arguments)
        repeated = refusal is not None
        tool = self.tools.get(call.name)
        call_ctx = replace(ctx, call_id=call.id, progress=lambda text: self._progress(ctx, call.id, call.name, text))
        if turn.hook_stop is not None:  # a hook ended the turn: the reply's other calls are not run
            refusal = HOOK_STOPPED_BEFORE.format(name=call.name, event=turn.hook_stop.event)
        elif refusal is None and tool is not None:
            refusal = turn.coach.before_call(call.name, call.arguments)  # a test file when tests are the spec
        if refusal is None and tool is not None:
            verdict = self.hooks.before_tool(call.name, call.arguments, call.id)
            if verdict is not None and verdict.arguments is not None:  # judged, run and shown as rewritten
                call = call._replace(arguments=_known(tool, verdict.arguments), rewritten=True)
            refusal = self._judged(turn, tool, call, call_ctx, verdict)
        if (
            refusal is None and tool is not None
        ):  # what the tool finds it must ask about while it runs (a local address)
            call_ctx = replace(call_ctx, confirm=lambda preview: self.approvals.confirm(tool, preview))
        return _Ready(call, call_ctx, refusal, repeated)

    def _judged(self, turn: Turn, tool: Tool, call: Call, ctx: ToolContext, verdict: ToolVerdict | None) -> str | None:
        """The approvals' say on a call, with what the PreToolUse hooks said of it; a hook's
        `continue: false` refuses it and ends the turn."""
        if verdict is not None and verdict.stop is not None:
            turn.hook_stop = verdict.stop
            return HOOK_STOPPED_CALL.format(name=call.name, command=verdict.stop.command)
        return self.approvals.refusal(tool, call.arguments, ctx, verdict)

    def _outcomes(self, turn: Turn, prepared: list[_Ready]) -> Iterator[tuple[ToolResult, float]]:
        """(result, seconds) of each call in order: refused ones at once; two or more approved
        reads side by side, their questions and progress asked on this thread; else here, in turn."""
        runnable = [ready for ready in prepared if ready.refusal is None]
        if len(runnable) < 2:
            for ready in prepared:
                yield self._refused(ready) if ready.refusal is not None else self._run_here(turn, ready)
            return
        together = Together(self._workers(runnable))
        jobs = [functools.partial(self._run_read, turn, _via(together, ready)) for ready in runnable]
        try:
            done = together.results(jobs)
            for ready in prepared:
                yield self._refused(ready) if ready.refusal is not None else next(done)
        finally:
            together.cancel()

    def _workers(self, runnable: list[_Ready]) -> int:
        if runnable[0].call.together == APART:
            return self.apart_workers
        waiting = all(ready.call.name in WAITING_READS for ready in runnable)
        return READ_WORKERS if waiting else LOCAL_READ_WORKERS

    def _refused(self, ready: _Ready) -> tuple[ToolResult, float]:
        return ToolResult(ready.refusal, ready.refusal, ok=False), 0.0

    def _run_here(self, turn: Turn, ready: _Ready) -> tuple[ToolResult, float]:
        """One call on this thread (a write, a command, a lone read); a call Ctrl-C stopped keeps what it had.
        A call that may write is snapshotted before and after (loop/changes.py)."""
        watch = changes.before(ready.ctx, ready.call.name, ready.call.arguments, self.emit)
        started = time.monotonic()
        try:
            result, seconds = self._run_read(turn, ready)
        except ToolInterrupted as stop:  # the Agent answers the call with stop.answer
            try:
                changes.after(ready.ctx, watch, ToolResult("", ""), self.emit)  # what it changed before it stopped
                self._keep_interrupted(ready, stop, time.monotonic() - started)
            except Exception:  # a front end already gone (an editor that closed) must not cost the call its answer
                pass
            raise
        return changes.after(ready.ctx, watch, result, self.emit), seconds

    def _run_read(self, turn: Turn, ready: _Ready) -> tuple[ToolResult, float]:
        """(the result, the seconds it took to run); touches nothing shared but the tool's own stores."""
        started = time.monotonic()
        name = ready.call.name
        result = dispatch(ready.ctx, self.tools, name, ready.call.arguments)
        return result, time.monotonic() - started

    def _finish(
        self, turn: Turn, ctx: ToolContext, ready: _Ready, result: ToolResult, seconds: float, transcript: Transcript
    ) -> Ran:
        """A result joins the history (in the model's order), the repeat guard sees it, the front ends its finish."""
        call_id, name, arguments = ready.call[:3]
        read_again = self._attached(turn, transcript, name, result)
        if read_again:  # the same text is in the request: not twice
            result = replace(result, content=already_attached(result.content))
        after = AfterTool()  # PostToolUse, on the loop's thread in the model's order, for a call that ran
        if ready.refusal is None:
            facts = result.facts.to_dict()
            after = self.hooks.after_tool(name, arguments, call_id, result.content, result.ok, facts, result.streams)
            turn.hook_stop = turn.hook_stop or after.stop
        if after.added:
            result = replace(result, content=result.content + after.added, full=result.full + after.added)
        if ready.call.rewritten:  # the model must not take the result for its own call's
            shown = ctx.redactor.text(head_tail_text(arguments, REWRITTEN_CHARS))
            note = REWRITTEN.format(arguments=shown)
            result = replace(result, content=f"{note}\n{result.content}", full=f"{note}\n{result.full}")
        same_look = False
        if result.facts.changed or (not result.ok and name not in LOOK_TOOLS):  # a failed read is no news
            self.guard.forget_looks()
        elif result.ok and (note := self.guard.same_look(name, arguments, result.content)):
            same_look = True
            result = replace(result, content=f"{result.content}\n{note}", full=f"{result.full}\n{note}")
        transcript.add_result(
            {"role": "tool", "tool_call_id": call_id, "content": result.content}, result.facts.to_dict()
        )
        ctx.outputs.add(call_id, result.content, result.full, result.facts)
        ok = result.ok and not result.facts.failed  # a command that exited 1 ran, but did not succeed
        self.emit(ev.ToolFinished(call_id, name, _first_line(result.content), ok, seconds, result.facts))
        self._open.pop(call_id, None)
        refused = ready.refusal is not None and not ready.repeated
        changed = result.facts.changed
        return Ran(name, arguments, result.ok, changed, after, ready.repeated, refused, same_look, read_again)

    @staticmethod
    def _attached(turn: Turn, transcript: Transcript, name: str, result: ToolResult) -> bool:
        """A read_file showing a file as attached to the request, which still holds it."""
        attached = name == "read_file" and result.ok and result.content in turn.attached.values()
        return attached and transcript.still_attached(result.content)

    def _progress(self, ctx: ToolContext, call_id: str, name: str, text: str) -> None:
        """A running tool's latest lines reach a client (an editor over ACP, the live area) redacted."""
        self.emit(ev.ToolProgress(call_id, name, ctx.redactor.text(valid_unicode(text))))

    def _keep_interrupted(self, ready: _Ready, stop: ToolInterrupted, seconds: float):
        """What a stopped call kept, stored like any output (recall, /show) and shown as its finish."""
        ctx, call_id, name = ready.ctx, ready.call.id, ready.call.name
        facts = stop.facts if isinstance(stop.facts, ResultFacts) else ResultFacts(interrupted=True)
        facts = replace(facts, interrupted=True, tail=ctx.redactor.text(valid_unicode(facts.tail)))
        with deferred():  # a second Ctrl-C must not tear the session's record of it
            full = ctx.redactor.text(valid_unicode(stop.full))
            ctx.outputs.add(call_id, ctx.redactor.text(valid_unicode(stop.answer)), full, facts)
        self._open.pop(call_id, None)
        self.emit(ev.ToolFinished(call_id, name, "interrupted", False, seconds, facts))


class Call(NamedTuple):
    id: str
    name: str
    arguments: str
    together: str = ""  # READS or APART: may run beside the calls of its kind next to it
    rewritten: bool = False  # the arguments are a PreToolUse hook's updatedInput, not the model's


def _known(tool: Tool, arguments: str) -> str:
    """A hook's rewritten arguments without keys the tool does not take (Claude Code's names of
    keys NanoHermes has none for): the tool would refuse the whole call for them."""
    args = json.loads(arguments)
    return json.dumps({key: value for key, value in args.items() if key in tool.parameters["properties"]})


@dataclass(frozen=True)
class _Ready:
    """A call past the guard and the approvals: its context, or the refusal it gets instead."""

    call: Call
    ctx: ToolContext
    refusal: str | None
    repeated: bool = False  # the refusal is the repeat guard's


def _via(together: Together, ready: _Ready) -> _Ready:
    """The call's questions and progress asked on the loop's thread while it runs beside others."""
    ctx = ready.ctx
    confirm = ctx.confirm
    ctx = replace(
        ctx,
        progress=lambda text: together.on_caller(lambda: ready.ctx.report(text)),
        confirm=None if confirm is None else lambda preview: together.on_caller(lambda: confirm(preview)),
        on_loop=together.on_caller,
    )
    return replace(ready, ctx=ctx)


def _first_line(text: str, limit: int = SUMMARY_LINE_CHARS) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(empty)"
    return line if len(line) <= limit else line[: limit - 1] + "…"
