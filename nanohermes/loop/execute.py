"""Running a reply's tool calls, in order: the repeat guard first, then the turn's coach (a test file
when the tests are the spec), the PreToolUse hooks and the approvals, then the tool (and its PostToolUse
hooks). Each result is made once, from what the call came to and the notes above or under it, and
handed to the transcript, which records it (its facts, its full output for `recall`). The front ends
see a start and a finish event per call (a call Ctrl-C stopped finishes too, with what it kept); the
time a call waited for an approval is not counted as its own."""

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
                with contextlib.closing(self._outcomes(turn, prepared, transcript)) as outcomes:
                    for ready, outcome in zip(prepared, outcomes, strict=True):
                        ran.append(self._finish(turn, ready, outcome, transcript))
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

    def _outcomes(self, turn: Turn, prepared: list[_Ready], transcript: Transcript) -> Iterator[_Outcome]:
        """What each call came to, in order: refused ones at once; two or more approved reads (or helpers in
        worktrees) side by side, their questions and progress asked on this thread; else here, in turn."""
        runnable = [ready for ready in prepared if ready.refusal is None]
        if len(runnable) < 2:
            for ready in prepared:
                yield self._refused(ready) if ready.refusal is not None else self._run_here(turn, ready, transcript)
            return
        together = Together(self._workers(runnable))
        jobs = [functools.partial(self._run_read, turn, _via(together, ready)) for ready in runnable]
        started = time.monotonic()
        try:
            done = together.results(jobs)
            for ready in prepared:
                yield (
                    self._refused(ready) if ready.refusal is not None else self._next(done, transcript, ready, started)
                )
        finally:
            together.cancel()

    def _next(self, done: Iterator[_Outcome], transcript: Transcript, ready: _Ready, started: float) -> _Outcome:
        """The next call's outcome of those run side by side; one that stopped (a helper whose turn was
        interrupted) keeps what it said as its result, as a call run here does."""
        try:
            return next(done)
        except ToolInterrupted as stop:
            self._keep_interrupted(transcript, ready, stop, time.monotonic() - started, None)
            raise

    def _workers(self, runnable: list[_Ready]) -> int:
        if runnable[0].call.together == APART:
            return self.apart_workers
        waiting = all(ready.call.name in WAITING_READS for ready in runnable)
        return READ_WORKERS if waiting else LOCAL_READ_WORKERS

    def _refused(self, ready: _Ready) -> _Outcome:
        return _Outcome(ToolResult(ready.refusal, ready.refusal, ok=False), 0.0)

    def _run_here(self, turn: Turn, ready: _Ready, transcript: Transcript) -> _Outcome:
        """One call on this thread (a write, a command, a lone read); a call Ctrl-C stopped keeps what it had.
        A call that may write is snapshotted before and after (loop/changes.py)."""
        watch = changes.before(ready.ctx, ready.call.name, ready.call.arguments, self.emit)
        started = time.monotonic()
        try:
            outcome = self._run_read(turn, ready)
        except ToolInterrupted as stop:  # what it kept is its result; the Agent answers the calls after it
            self._keep_interrupted(transcript, ready, stop, time.monotonic() - started, watch)
            raise
        return outcome._replace(files=changes.after(ready.ctx, watch, self.emit))

    def _run_read(self, turn: Turn, ready: _Ready) -> _Outcome:
        """The result and the seconds it took to run; touches nothing shared but the tool's own stores."""
        started = time.monotonic()
        result = dispatch(ready.ctx, self.tools, ready.call.name, ready.call.arguments)
        return _Outcome(result, time.monotonic() - started)

    def _finish(self, turn: Turn, ready: _Ready, outcome: _Outcome, transcript: Transcript) -> Ran:
        """The call's result made once, from what it came to and the notes around it (a hook's rewrite
        above; the files a command changed, PostToolUse's note and the repeat guard's under it), and
        handed to the transcript, which records it (in the model's order); the front ends see its finish."""
        call_id, name, arguments = ready.call[:3]
        result = outcome.result
        read_again = self._attached(turn, transcript, name, result)
        if read_again:  # the same text (and image) is in the request: not twice
            result = replace(result, images=())
        shown = already_attached(result.content) if read_again else result.content
        after = AfterTool()  # PostToolUse, on the loop's thread in the model's order, for a call that ran
        if ready.refusal is None:
            facts = result.facts.to_dict()
            after = self.hooks.after_tool(
                name, arguments, call_id, shown + outcome.files, result.ok, facts, result.streams
            )
            turn.hook_stop = turn.hook_stop or after.stop
        look = self._look(name, arguments, result, shown + outcome.files + after.added)
        made = _made(result, shown, _rewritten_note(ready.call), outcome.files + after.added + look)
        recorded = transcript.add_result(call_id, made)  # its images (read_file's) with it
        ok = result.ok and not result.facts.failed  # a command that exited 1 ran, but did not succeed
        self.emit(ev.ToolFinished(call_id, name, _first_line(recorded.content), ok, outcome.seconds, recorded.facts))
        self._open.pop(call_id, None)
        refused = ready.refusal is not None and not ready.repeated
        changed = result.facts.changed
        return Ran(name, arguments, result.ok, changed, after, ready.repeated, refused, bool(look), read_again)

    def _look(self, name: str, arguments: str, result: ToolResult, seen: str) -> str:
        """The repeat guard's line under a look that found what it found before ("" for none); a change,
        or a failure other than a read's (a failed read is no news), makes every look new again."""
        if result.facts.changed or (not result.ok and name not in LOOK_TOOLS):
            self.guard.forget_looks()
            return ""
        note = self.guard.same_look(name, arguments, seen) if result.ok else None
        return f"\n{note}" if note else ""

    @staticmethod
    def _attached(turn: Turn, transcript: Transcript, name: str, result: ToolResult) -> bool:
        """A read_file showing a file as attached to the request, which still holds it."""
        attached = name == "read_file" and result.ok and result.content in turn.attached.values()
        return attached and transcript.still_attached(result.content, result.images)

    def _progress(self, ctx: ToolContext, call_id: str, name: str, text: str) -> None:
        """A running tool's latest lines reach a client (an editor over ACP, the live area) redacted."""
        self.emit(ev.ToolProgress(call_id, name, ctx.redactor.text(valid_unicode(text))))

    def _keep_interrupted(
        self, transcript: Transcript, ready: _Ready, stop: ToolInterrupted, seconds: float, watch: changes.Watch | None
    ) -> None:
        """What a stopped call kept is its result, recorded like any (recall, /show) before anything is
        said of it: a front end already gone (an editor that closed) must not cost the call its answer.
        Then what it changed before it stopped, and its finish."""
        call_id, name = ready.call.id, ready.call.name
        facts = replace(stop.facts if isinstance(stop.facts, ResultFacts) else ResultFacts(), interrupted=True)
        with deferred():  # a second Ctrl-C must not tear the session's record of it
            recorded = transcript.add_result(call_id, ToolResult(stop.answer, stop.full, ok=False, facts=facts))
        self._open.pop(call_id, None)
        try:
            changes.after(ready.ctx, watch, self.emit)
            self.emit(ev.ToolFinished(call_id, name, "interrupted", False, seconds, recorded.facts))
        except Exception:  # a front end already gone is told nothing more
            pass


class _Outcome(NamedTuple):
    """What a call came to: the tool's result, the seconds it ran, and the line naming the files a
    command changed (loop/changes.py; "" for none), which goes under the result."""

    result: ToolResult
    seconds: float
    files: str = ""


def _made(result: ToolResult, shown: str, above: str, under: str) -> ToolResult:
    """The result as the history records it, made once: what the model is shown of the output
    (`shown`), a note above it and lines under it; the full output with the same notes."""
    head = f"{above}\n" if above else ""
    return replace(result, content=f"{head}{shown}{under}", full=f"{head}{result.full}{under}")


class Call(NamedTuple):
    id: str
    name: str
    arguments: str
    together: str = ""  # READS or APART: may run beside the calls of its kind next to it
    rewritten: bool = False  # the arguments are a PreToolUse hook's updatedInput, not the model's


def _rewritten_note(call: Call) -> str:
    """The line above the result of a call a PreToolUse hook rewrote ("" for none): the model must
    not take the result for its own call's."""
    return REWRITTEN.format(arguments=head_tail_text(call.arguments, REWRITTEN_CHARS)) if call.rewritten else ""


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
