"""The loop: user input → (fit context → request → tool calls)* → answer.

One small class owns the conversation. Leaving the loop early is StopTurn, which carries a
reason code the front ends put into words; the renderers see only events. Approvals, the
repeat guard, usage counting and keeping the context (loop/keeper.py) are collaborators.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import replace

from nanohermes import events as ev
from nanohermes.config import Config
from nanohermes.context import pairing_problems, sanitize_tool_pairs
from nanohermes.context.tokens import estimate_tokens_by_ratio
from nanohermes.errors import ContextOverflowError, NanoHermesError, Terminated, ToolInterrupted
from nanohermes.loop.approvals import Approvals
from nanohermes.loop.followthrough import MAKE_THE_CHANGE, shows_an_unmade_change
from nanohermes.loop.guard import RepeatGuard
from nanohermes.loop.history import last_assistant_text, unanswered_calls
from nanohermes.loop.keeper import ContextKeeper
from nanohermes.memory.block import attach_block
from nanohermes.provider import AssistantTurn, Provider
from nanohermes.provider.runaway import tool_call_in_text
from nanohermes.provider.stream import FINISH_REPEATED
from nanohermes.signals import deferred
from nanohermes.storage.session import Session
from nanohermes.text import strip_thinking, valid_unicode
from nanohermes.tools import Tool, ToolContext, ToolResult, dispatch

INTERRUPTED = "[interrupted by user]"
STOPPED = "[interrupted: NanoHermes was stopped by {}]"  # SIGTERM or SIGHUP
NO_ANSWER = "[no answer: the request failed]"
NO_RESULT_AFTER_CRASH = "[no result: the previous run ended before this call finished]"
CUT_CALL_RETRY = (
    "[Your last reply was cut off by the output token limit in the middle of a tool call, so it was not run. "
    "Call the tool again with shorter arguments (e.g. write a large file in several smaller edits).]"
)
REPEATED_RETRY = (
    "[Your last reply was cut: it kept repeating the same passage (one copy is kept above). "
    "Don't repeat it. Go on from there: call a tool if something is missing, else give your answer.]"
)
CALL_AS_TEXT_RETRY = (
    "[Your last reply wrote a {name} call as text, so nothing ran. To use a tool, make a real tool "
    "call (not text); or, if you have what you need, give your answer.]"
)
# A run the loop stops (step limit, loop guard, replies cut again and again) still ends with an
# answer: one last request, tools off, for the best answer from what was found, marked partial.
FINAL_ANSWER_REQUEST = (
    "[NanoHermes stopped this run: {why}. No more tool calls. From what you found so far, give the "
    "best answer you can now; say what is unverified or left to do.]"
)
STOPPED_WHY = {
    ev.STOP_MAX_STEPS: "the step limit was reached",
    ev.STOP_REPEATING: "you kept repeating the same tool call",
    ev.STOP_CUT_CALLS: "your tool calls kept being cut by the output token limit",
}
PARTIAL_MARK = ev.PARTIAL_MARK
MAX_OVERFLOW_RETRIES = 2  # compact-and-retry attempts after a context-length error
MAX_LENGTH_RETRIES = 2  # replies cut by max_tokens mid tool call
MAX_RUNAWAY_RETRIES = 2  # replies cut for repeating, or calls written as text: then the reply is the answer
UNMADE_CHANGE_NOTICE = "the reply showed a change without making it; told the model to make it"  # loop/followthrough.py
# A model going round in circles (a refused repeat, a look that found the same as before) is
# asked for its answer, with tool calls off, once a request: Qwen2.5-Coder-1.5B, asked for a
# port, read config/settings.ini and then read it five more times; the same history with this
# request gave the right answer. A note in the tool result did not (it wrote the next call as
# text). Later repeats are refused, and past REPEAT_STOP the run stops.
ANSWER_NOW = (
    "[NanoHermes: you are going round in circles (the same call again, the same result). No tool calls in "
    "this reply: from what you found so far, give your answer; if something is still missing, say what.]"
)


class StopTurn(Exception):
    """Ends the turn early; `code` (an events.STOP_* code) and `detail` say why."""

    def __init__(self, code: str, **detail):
        super().__init__(code)
        self.code, self.detail = code, detail


class Agent:
    def __init__(
        self,
        *,
        config: Config,
        provider: Provider,
        session: Session,
        tools: list[Tool],
        ctx: ToolContext,
        system_prompt: Callable[[], str],
        emit: Callable[[object], None],
        approvals: Approvals,
        memory_for: Callable[[str], str] = lambda text: "",
    ):
        """No I/O: a resumed session's unanswered calls are mended by resume(). The system
        message is built here and on reset() only, so it is byte-identical across requests;
        `memory_for(user_text)` gives the memory block that travels with that user message."""
        self.config, self.session, self.emit, self.approvals = config, session, emit, approvals
        self.system_prompt, self.memory_for = system_prompt, memory_for
        self.tools = {t.name: t for t in tools}  # all known, so plan mode can say why one is blocked
        self.guard = RepeatGuard()
        self.messages: list[dict] = [{"role": "system", "content": system_prompt()}, *session.state.messages]
        self.keeper = ContextKeeper(self, provider, ctx, recall_offered=session.state.cut_or_cleared)
        self._partial: list[str] = []
        self._turn_text = ""  # this turn's user request, and whether a file changed in it (loop/followthrough.py)
        self._changed = self._nudged = False
        self._answer_now = ""  # "next": ask for the answer with tool calls off (ANSWER_NOW); "used": asked this turn
        self._mark = ""  # put before the streamed text of a stopped run's final answer

    @property
    def window(self) -> int | None:
        """The model's context window in tokens, once known (config, server, or an overflow error)."""
        return self.keeper.settings.window

    @property
    def settings(self):
        return self.keeper.settings

    def resume(self) -> None:
        """A run killed mid-tool left calls without results: answer them, so the history is valid."""
        self._answer_open_calls(NO_RESULT_AFTER_CRASH)

    # -- the turn ---------------------------------------------------------------------------

    def run_turn(self, user_text: str) -> ev.TurnResult:
        """Run one user request to its answer. KeyboardInterrupt ends it with a valid history;
        so does Terminated (SIGTERM, SIGHUP), which is then raised again for the front end to
        leave. The result names the calls refused because nothing could ask (cannot_ask)."""
        self.approvals.unasked.clear()
        result = self._run_turn(user_text)
        result.cannot_ask = list(self.approvals.unasked)
        return result

    def _run_turn(self, user_text: str) -> ev.TurnResult:
        usage = self.keeper.start_turn()
        steps = cut_calls = runaways = 0
        try:
            self._start_turn(user_text)
            while True:
                if steps >= self.config.max_steps:
                    raise StopTurn(ev.STOP_MAX_STEPS, steps=steps, max_steps=self.config.max_steps)
                options = self._tools_off_once()
                self.keeper.fit()
                turn = self._request_with_recovery(**options)
                steps += 1
                if turn.finish_reason == "length" and turn.tool_calls:
                    cut_calls += 1
                    self._reject_cut_tool_call(turn, cut_calls)
                    continue
                retry = self._runaway_retry(turn) if runaways < MAX_RUNAWAY_RETRIES else None
                if retry:  # a loop cut short, a call written as text, a fix shown not made: say so, and go on
                    runaways += 1
                    self.append(turn.as_message())
                    self.emit(ev.AssistantMessageDone(turn.content, True))
                    self.emit(ev.Notice(retry[0], "warning"))
                    self.append({"role": "user", "content": retry[1]})
                    continue
                self.append(turn.as_message())
                if not turn.tool_calls:
                    self.emit(ev.AssistantMessageDone(turn.content, False))
                    if turn.finish_reason == "length":  # never pass a cut answer off as whole
                        self.emit(ev.Notice("the answer was cut at max_tokens; ask to continue", "warning"))
                    return ev.TurnResult(turn.content, steps, usage.event())
                self._run_tool_calls(turn)
                if self._shows_unmade_change(turn.content):  # "add this line: ```…```" and a re-run of the test
                    self.emit(ev.Notice(UNMADE_CHANGE_NOTICE, "warning"))
                    self.append({"role": "user", "content": MAKE_THE_CHANGE})
                self.keeper.fit()
        except StopTurn as stop:
            answer = self._final_answer(stop) or last_assistant_text(self.messages)
            return ev.TurnResult(answer, steps, usage.event(), "limit", stop.code, stop.detail)
        except ToolInterrupted as stop:  # before KeyboardInterrupt, its base: the stopped call keeps its own answer
            with deferred():  # a second Ctrl-C must not tear the clean-up (signals.py)
                self._answer_open_calls(INTERRUPTED, first=stop.answer)
            return ev.TurnResult(INTERRUPTED, steps, usage.event(), "interrupted", ev.STOP_INTERRUPTED)
        except (KeyboardInterrupt, Terminated) as stop:  # streaming, a tool, or between: every call gets a result
            with deferred():  # a second Ctrl-C must not tear the clean-up (signals.py)
                partial = "".join(self._partial)
                self._answer_open_calls(INTERRUPTED if isinstance(stop, KeyboardInterrupt) else STOPPED.format(stop))
                self._close_interrupted_stream()
                usage.interrupted(self.keeper.tokens.estimate, estimate_tokens_by_ratio(partial))
            if isinstance(stop, Terminated):  # SIGTERM/SIGHUP: the history is valid; now leave
                raise
            return ev.TurnResult(INTERRUPTED, steps, usage.event(), "interrupted", ev.STOP_INTERRUPTED)

    def _start_turn(self, user_text: str) -> None:
        self.keeper.learn_advertised_window()
        self.guard.reset()
        self._turn_text, self._changed, self._nudged, self._answer_now = user_text, False, False, ""
        if self.messages[-1]["role"] == "user":  # the last turn failed before any answer:
            self.append({"role": "assistant", "content": NO_ANSWER})  # strict templates need alternation
        user_text = self.ctx.redactor.text(valid_unicode(user_text))  # argv and stdin may carry any bytes
        block = self.memory_for(user_text)
        self.messages.append({"role": "user", "content": attach_block(user_text, block)})
        self.session.record_message({"role": "user", "content": user_text}, memory=block)

    def _final_answer(self, stop: StopTurn) -> str:
        """One last request with tool calls off (the prompt stays the conversation's, so a prefix
        cache serves it): the model's best answer from what it found, marked partial; "" when
        that request fails too (the stop is still reported, and still says the run stopped early)."""
        if self.messages[-1]["role"] == "user":  # strict templates need alternation
            self.append({"role": "assistant", "content": ""})
        self.append({"role": "user", "content": FINAL_ANSWER_REQUEST.format(why=STOPPED_WHY[stop.code])})
        self._mark = PARTIAL_MARK
        try:
            self.keeper.fit()
            turn = self._request_with_recovery(tool_choice="none")
        except (NanoHermesError, ValueError) as exc:  # the provider failed again: the stop says enough
            self.emit(ev.Notice(f"no final answer: {exc}", "warning"))
            return ""
        except (KeyboardInterrupt, Terminated):  # keep what came, as any interrupted stream; SIGTERM still leaves
            with deferred():
                self._close_interrupted_stream()
            if isinstance(sys.exc_info()[1], Terminated):
                raise
            return ""
        finally:
            self._mark = ""
        content = strip_thinking(turn.content).strip()
        if not content:
            return ""
        answer = PARTIAL_MARK + content
        self.append({"role": "assistant", "content": answer})  # a call it made anyway is not kept: it never ran
        self.emit(ev.AssistantMessageDone(answer, False))
        return answer

    def _request_with_recovery(self, **options) -> AssistantTurn:
        """Stream one reply; on a context-length error compact and retry (bounded)."""
        for attempt in range(MAX_OVERFLOW_RETRIES + 1):
            self._partial = []
            sent = (
                sanitize_tool_pairs(self.messages, NO_RESULT_AFTER_CRASH)
                if pairing_problems(self.messages)
                else list(self.messages)
            )
            self.emit(ev.RequestStarted())
            self.keeper.usage.begin(sent)
            try:
                turn = self.keeper.send(
                    sent, self.tool_schemas(), self._on_text, on_restart=self._on_restart, **options
                )
            except ContextOverflowError as exc:
                if attempt == MAX_OVERFLOW_RETRIES:
                    raise
                self.keeper.on_overflow(exc)
                continue
            self._partial = []
            return turn
        raise AssertionError("unreachable")

    def _on_text(self, text: str) -> None:
        if self._mark and not self._partial:  # the final answer of a stopped run says it is partial
            text = self._mark + text
        self._partial.append(text)
        self.emit(ev.TextDelta(text))

    def _on_restart(self) -> None:
        """A retried request streams the reply again from its start."""
        self._partial = []
        self.emit(ev.StreamRestarted())

    def _runaway_retry(self, turn: AssistantTurn) -> tuple[str, str] | None:
        """(what the user is told, what the model is told) for a reply that ran away: cut for
        repeating one passage (provider/runaway.py), a tool call written as text, or (once a
        turn) a change the user asked for shown in a code block but not made."""
        if turn.finish_reason == FINISH_REPEATED:
            return "the reply kept repeating itself; it was cut and the model told so", REPEATED_RETRY
        if turn.tool_calls:
            return None
        if self._shows_unmade_change(turn.content):  # first: code for a fix and a call as text, the fix is the point
            return UNMADE_CHANGE_NOTICE, MAKE_THE_CHANGE
        name = tool_call_in_text(turn.content, (s["function"]["name"] for s in self.tool_schemas()))
        if name:
            return f"the model wrote a {name} call as text; told it to make a real call", CALL_AS_TEXT_RETRY.format(
                name=name
            )
        return None

    def _shows_unmade_change(self, content: str) -> bool:
        """Once a turn: the reply shows code for a change the user asked for, and no file changed."""
        if self._nudged or not shows_an_unmade_change(self._turn_text, content, self._changed):
            return False
        self._nudged = any(s["function"]["name"] == "edit_file" for s in self.tool_schemas())
        if (
            self._nudged and self._answer_now == "next"
        ):  # the change needs the tools: don't ask for an answer without them
            self._answer_now = "used"
        return self._nudged

    def _reject_cut_tool_call(self, turn: AssistantTurn, cut_calls: int) -> None:
        """A tool call cut by max_tokens is broken JSON: never run it, ask for a shorter one."""
        if cut_calls > MAX_LENGTH_RETRIES:
            raise StopTurn(ev.STOP_CUT_CALLS)
        self.emit(ev.Notice("reply cut by max_tokens mid tool call; asking the model to retry", "warning"))
        self.append({"role": "assistant", "content": turn.content})  # "" keeps roles alternating
        self.append({"role": "user", "content": CUT_CALL_RETRY})

    # -- tools ------------------------------------------------------------------------------

    def tool_schemas(self) -> list[dict]:
        """What the model is offered: the mode's tools (plan mode: read-only ones), fixed for a
        session but for a mode switch and `recall`, which joins once, at the first compaction
        (before that it has nothing to return, and small models call whatever is on offer); a
        compaction rewrites the prompt anyway. A small window gets the lean set, decided when
        the window is learned (before the first request, or once, from an overflow error)."""
        offered = self.approvals.offered(list(self.tools.values()))
        lean = self.keeper.settings.lean_tools  # a small window (context/budget.py): the lean set
        return [
            t.schema(lean)
            for t in offered
            if (t.name != "recall" or self.keeper.recall_offered) and (t.lean or not lean)
        ]

    def _run_tool_calls(self, turn: AssistantTurn) -> None:
        """Run the calls in order. On Ctrl-C, run_turn gives the unanswered ones a result."""
        self.emit(ev.AssistantMessageDone(turn.content, True))
        for call in turn.tool_calls:
            fn = call["function"]
            self.emit(ev.ToolStarted(call["id"], fn["name"], fn["arguments"]))
            result, seconds = self._run_one(call["id"], fn["name"], fn["arguments"])
            if not result.ok or result.facts.changed:
                self.guard.forget_looks()
            elif note := self.guard.same_look(fn["name"], fn["arguments"], result.content):
                self._answer_now = self._answer_now or "next"
                result = replace(result, content=f"{result.content}\n{note}", full=f"{result.full}\n{note}")
            self.append({"role": "tool", "tool_call_id": call["id"], "content": result.content}, result.facts.to_dict())
            self._changed |= result.facts.changed
            self.keeper.ctx.outputs.add(call["id"], result.content, result.full, result.facts)
            self.emit(
                ev.ToolFinished(call["id"], fn["name"], _first_line(result.content), result.ok, seconds, result.facts)
            )
        if self.guard.stuck:
            raise StopTurn(ev.STOP_REPEATING)

    def _tools_off_once(self) -> dict:
        """The request options: after the first time a turn went round in circles, ask for the
        answer with tool calls off."""
        if self._answer_now != "next":
            return {}
        self._answer_now = "used"
        self.emit(ev.Notice("the model was going round in circles; asked it for its answer, tool calls off", "warning"))
        self.append({"role": "user", "content": ANSWER_NOW})
        return {"tool_choice": "none"}

    def _run_one(self, call_id: str, name: str, arguments: str) -> tuple[ToolResult, float]:
        """The result and the seconds it took to run (the wait for an approval not counted)."""
        refusal = self.guard.see(name, arguments)
        if refusal is not None:
            self._answer_now = self._answer_now or "next"
        tool = self.tools.get(name)
        ctx = replace(
            self.keeper.ctx, call_id=call_id, progress=lambda text: self.emit(ev.ToolProgress(call_id, name, text))
        )
        if refusal is None and tool is not None:
            refusal = self.approvals.refusal(tool, arguments, ctx)
        if refusal is not None:
            return ToolResult(refusal, refusal, ok=False), 0.0
        if tool is not None:  # what the tool finds it must ask about while it runs (a local address)
            ctx = replace(ctx, confirm=lambda preview: self.approvals.confirm(tool, preview))
        started = time.monotonic()
        return dispatch(ctx, self.tools, name, arguments), time.monotonic() - started

    @property
    def ctx(self) -> ToolContext:
        return self.keeper.ctx

    # -- history ----------------------------------------------------------------------------

    def append(self, message: dict, facts: dict | None = None) -> None:
        message = self.ctx.redactor.message(message)  # a secret is neither stored nor sent
        self.messages.append(message)
        self.session.record_message(message, facts)

    def _answer_open_calls(self, text: str, first: str | None = None) -> None:
        """Give every call of the last assistant message that has no result one (`first`, when
        given, goes to the first of them: the call that was running)."""
        for i, call_id in enumerate(unanswered_calls(self.messages)):
            self.append(
                {"role": "tool", "tool_call_id": call_id, "content": first if i == 0 and first is not None else text}
            )

    def _close_interrupted_stream(self) -> None:
        """Ctrl-C while streaming: keep what was said, drop half-received tool calls."""
        text = "".join(self._partial)
        self._partial = []
        if self.messages[-1]["role"] == "user" or text:
            self.append({"role": "assistant", "content": (text + "\n" if text else "") + INTERRUPTED})

    def fit_context(self, force: bool = False, focus: str | None = None):
        """Compact now if needed (or always, with force: /compact). Returns the report or None."""
        return self.keeper.fit(force=force, focus=focus)

    def switch(self, config: Config) -> None:
        """/model or /mode: the next request uses the new model and mode. Besides /reset, this
        is the one place the prompt prefix changes within a session: the system message gets
        the new mode line (the caller has rebuilt it) and plan mode offers fewer tools."""
        self.config = config
        self.keeper.switch(config)
        self.approvals.mode = config.mode
        self.messages[0] = {"role": "system", "content": self.system_prompt()}

    def reset(self) -> None:
        self.session.record_reset()
        self.messages = [{"role": "system", "content": self.system_prompt()}]
        self.keeper.reset()
        self.guard.reset()
        self.approvals.reset()


def _first_line(text: str, limit: int = 120) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(empty)"
    return line if len(line) <= limit else line[: limit - 1] + "…"
