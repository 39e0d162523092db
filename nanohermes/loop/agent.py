"""The loop: user input → (fit context → request → tool calls)* → answer.

One small class owns the conversation. Leaving the loop early is StopTurn, which carries a
reason code the front ends put into words; the renderers see only events. Approvals, the
repeat guard, usage counting and the context engine are collaborators with one job each.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from nanohermes import events as ev
from nanohermes.config import Config
from nanohermes.context import ContextEngine, PromptTokenTracker, pairing_problems, sanitize_tool_pairs, settings_for_window
from nanohermes.errors import ContextOverflowError
from nanohermes.loop.approvals import Approvals
from nanohermes.loop.guard import RepeatGuard
from nanohermes.loop.history import last_assistant_text, unanswered_calls
from nanohermes.loop.usage import UsageCounter
from nanohermes.provider import AssistantTurn, Provider
from nanohermes.storage.session import Session
from nanohermes.tools import Tool, ToolContext, ToolResult, dispatch

INTERRUPTED = "[interrupted by user]"
NO_ANSWER = "[no answer: the request failed]"
NO_RESULT_AFTER_CRASH = "[no result: the previous run ended before this call finished]"
CUT_CALL_RETRY = ("[Your last reply was cut off by the output token limit in the middle of a tool call, so it was not run. "
                  "Call the tool again with shorter arguments (e.g. write a large file in several smaller edits).]")
MAX_OVERFLOW_RETRIES = 2  # compact-and-retry attempts after a context-length error
MAX_LENGTH_RETRIES = 2  # replies cut by max_tokens mid tool call
OVERFLOW_SHRINK = 0.7  # after an overflow error the retry must be clearly smaller, not just "under budget"
SUMMARY_MAX_TOKENS = 800  # 300 words is ~400 tokens; room for a model that overshoots a little


class StopTurn(Exception):
    """Ends the turn early; `code` (an events.STOP_* code) and `detail` say why."""

    def __init__(self, code: str, **detail):
        super().__init__(code)
        self.code, self.detail = code, detail


class Agent:
    def __init__(self, *, config: Config, provider: Provider, session: Session, tools: list[Tool], ctx: ToolContext,
                 system_for: Callable[[str], str], emit: Callable[[object], None], approvals: Approvals):
        """No I/O: a resumed session's unanswered calls are mended by resume()."""
        self.config, self.provider, self.session = config, provider, session
        self.system_for, self.emit, self.approvals = system_for, emit, approvals
        self.tools = {t.name: t for t in tools}  # all known, so plan mode can say why one is blocked
        self.settings = settings_for_window(None, config.max_tokens)
        self.engine = ContextEngine(self.settings)
        self.tokens = PromptTokenTracker()
        self.guard = RepeatGuard()
        self.ctx = ctx
        self.recall_useful = session.state.cut_or_cleared
        self.messages: list[dict] = [{"role": "system", "content": system_for("")}, *session.state.messages]
        self._window_probed = False
        self._last_notice = ""
        self._partial: list[str] = []
        if config.context_window:
            self.learn_window(config.context_window)

    @property
    def window(self) -> int | None:
        """The model's context window in tokens, once known (config, server, or an overflow error)."""
        return self.settings.window

    def resume(self) -> None:
        """A run killed mid-tool left calls without results: answer them, so the history is valid."""
        self._answer_open_calls(NO_RESULT_AFTER_CRASH)

    # -- the turn ---------------------------------------------------------------------------

    def run_turn(self, user_text: str) -> ev.TurnResult:
        """Run one user request to its answer. KeyboardInterrupt ends it with a valid history.
        The result names the calls refused because nothing could ask (cannot_ask)."""
        self.approvals.unasked.clear()
        result = self._run_turn(user_text)
        result.cannot_ask = list(self.approvals.unasked)
        return result

    def _run_turn(self, user_text: str) -> ev.TurnResult:
        usage, steps, cut_calls = UsageCounter(), 0, 0
        try:
            self._start_turn(user_text)
            while True:
                if steps >= self.config.max_steps:
                    raise StopTurn(ev.STOP_MAX_STEPS, steps=steps, max_steps=self.config.max_steps)
                self.fit_context()
                turn = self._request_with_recovery(usage)
                steps += 1
                if turn.finish_reason == "length" and turn.tool_calls:
                    cut_calls += 1
                    self._reject_cut_tool_call(turn, cut_calls)
                    continue
                self._append(turn.as_message())
                if not turn.tool_calls:
                    self.emit(ev.AssistantMessageDone(turn.content, False))
                    if turn.finish_reason == "length":  # never pass a cut answer off as whole
                        self.emit(ev.Notice("the answer was cut at max_tokens; ask to continue", "warning"))
                    return ev.TurnResult(turn.content, steps, usage.event())
                self._run_tool_calls(turn)
                self.fit_context()
        except StopTurn as stop:
            return ev.TurnResult(last_assistant_text(self.messages), steps, usage.event(), "limit", stop.code, stop.detail)
        except KeyboardInterrupt:  # streaming, a tool, or between the two: every call gets a result
            self._answer_open_calls(INTERRUPTED)
            self._close_interrupted_stream()
            return ev.TurnResult(INTERRUPTED, steps, usage.event(), "interrupted", ev.STOP_INTERRUPTED)

    def _start_turn(self, user_text: str) -> None:
        if self.settings.window is None and not self._window_probed:
            self._window_probed = True  # once: llama.cpp advertises n_ctx, most others don't
            n_ctx = self.provider.advertised_context_window()
            if n_ctx:
                self.learn_window(n_ctx)
        self.guard.reset()
        self.messages[0] = {"role": "system", "content": self.system_for(user_text)}
        if self.messages[-1]["role"] == "user":  # the last turn failed before any answer:
            self._append({"role": "assistant", "content": NO_ANSWER})  # strict templates need alternation
        self._append({"role": "user", "content": user_text})

    def _request_with_recovery(self, usage: UsageCounter) -> AssistantTurn:
        """Stream one reply; on a context-length error compact and retry (bounded)."""
        for attempt in range(MAX_OVERFLOW_RETRIES + 1):
            self._partial = []
            sent = sanitize_tool_pairs(self.messages, NO_RESULT_AFTER_CRASH) if pairing_problems(self.messages) else list(self.messages)
            try:
                turn = self.provider.stream_chat(sent, self.tool_schemas(), self._on_text,
                                                 max_tokens=self.settings.max_tokens, on_restart=self._on_restart)
            except ContextOverflowError as exc:
                if attempt == MAX_OVERFLOW_RETRIES:
                    raise
                self._on_overflow(exc)
                continue
            self._partial = []
            usage.add(turn.usage)
            if self.settings.window and turn.usage and turn.usage.get("prompt_tokens"):
                # Only a known window has a token trigger; counting loads a ~0.3 s encoding.
                self.tokens.record_usage(turn.usage["prompt_tokens"], sent)
            return turn
        raise AssertionError("unreachable")

    def _on_text(self, text: str) -> None:
        self._partial.append(text)
        self.emit(ev.TextDelta(text))

    def _on_restart(self) -> None:
        """A retried request streams the reply again from its start."""
        self._partial = []
        self.emit(ev.StreamRestarted())

    def _reject_cut_tool_call(self, turn: AssistantTurn, cut_calls: int) -> None:
        """A tool call cut by max_tokens is broken JSON: never run it, ask for a shorter one."""
        if cut_calls > MAX_LENGTH_RETRIES:
            raise StopTurn(ev.STOP_CUT_CALLS)
        self.emit(ev.Notice("reply cut by max_tokens mid tool call; asking the model to retry", "warning"))
        self._append({"role": "assistant", "content": turn.content})  # "" keeps roles alternating
        self._append({"role": "user", "content": CUT_CALL_RETRY})

    # -- tools ------------------------------------------------------------------------------

    def tool_schemas(self) -> list[dict]:
        """What the model is offered: the mode's tools (plan mode: read-only ones). `recall` only
        once something was cut or cleared: before that it has nothing to return, and small
        models call whatever is on offer."""
        offered = self.approvals.offered(list(self.tools.values()))
        return [t.schema() for t in offered if t.name != "recall" or self.recall_useful]

    def _run_tool_calls(self, turn: AssistantTurn) -> None:
        """Run the calls in order. On Ctrl-C, run_turn gives the unanswered ones a result."""
        self.emit(ev.AssistantMessageDone(turn.content, True))
        for call in turn.tool_calls:
            fn = call["function"]
            self.emit(ev.ToolStarted(call["id"], fn["name"], fn["arguments"]))
            result = self._run_one(fn["name"], fn["arguments"])
            self._append({"role": "tool", "tool_call_id": call["id"], "content": result.content}, result.facts.to_dict())
            self.ctx.outputs.add(call["id"], result.content, result.full, result.facts)
            self.recall_useful = self.recall_useful or result.full != result.content
            self.emit(ev.ToolFinished(call["id"], fn["name"], _first_line(result.content), result.ok))
        if self.guard.stuck:
            raise StopTurn(ev.STOP_REPEATING)

    def _run_one(self, name: str, arguments: str) -> ToolResult:
        refusal = self.guard.see(name, arguments)
        tool = self.tools.get(name)
        if refusal is None and tool is not None:
            refusal = self.approvals.refusal(tool, arguments, self.ctx)
        if refusal is not None:
            return ToolResult(refusal, refusal, ok=False)
        return dispatch(self.ctx, self.tools, name, arguments)

    # -- history ----------------------------------------------------------------------------

    def _append(self, message: dict, facts: dict | None = None) -> None:
        self.messages.append(message)
        self.session.record_message(message, facts)

    def _answer_open_calls(self, text: str) -> None:
        """Give every call of the last assistant message that has no result one."""
        for call_id in unanswered_calls(self.messages):
            self._append({"role": "tool", "tool_call_id": call_id, "content": text})

    def _close_interrupted_stream(self) -> None:
        """Ctrl-C while streaming: keep what was said, drop half-received tool calls."""
        text = "".join(self._partial)
        self._partial = []
        if self.messages[-1]["role"] == "user" or text:
            self._append({"role": "assistant", "content": (text + "\n" if text else "") + INTERRUPTED})

    # -- context ----------------------------------------------------------------------------

    def fit_context(self, force: bool = False, focus: str | None = None, shrink: float | None = None):
        """Keep what is sent within budget; record and announce any change. Returns the report.

        `shrink` (after a provider overflow) demands the prompt come down to that fraction of
        its estimated tokens, so even a short history is cut rather than resent as it was."""
        limit = self.settings.token_limit
        estimate = self.tokens.estimate(self.messages) if limit or shrink else None
        if shrink:
            limit = min(limit or estimate, int(estimate * shrink))
        new, report = self.engine.fit(self.messages, self._summarize, force=force, focus=focus,
                                      token_estimate=estimate, token_limit=limit, facts=self.ctx.outputs.facts())
        if report is None:
            return None
        if report.layers:  # something changed (an over-budget check that could do nothing did not)
            self.messages = new
            self.recall_useful = True
            self.session.record_context(new[1:], {
                "layers": report.layers, "forced": force, "before_chars": report.before_chars,
                "after_chars": report.after_chars, "replaced_messages": len(report.dropped),
                "cleared_outputs": report.placeholder_ids, "summary": report.summary or report.digest,
            })
        line = report.one_line()
        if (report.layers or report.notices) and line != self._last_notice:  # say it once, not every step
            self._last_notice = line
            self.emit(ev.Notice(line, "warning" if report.over_budget or report.thrash_skipped else "info"))
        return report

    def _summarize(self, system: str, user_text: str) -> str:
        max_tokens = min(SUMMARY_MAX_TOKENS, self.settings.max_tokens)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user_text}]
        return self.provider.complete(messages, model=self.config.effective_summary_model, max_tokens=max_tokens, retries=0).content

    def learn_window(self, n_ctx: int) -> None:
        """Scale the budget, the tool cap and max_tokens to a model's context window (tokens)."""
        self.settings = settings_for_window(n_ctx, self.config.max_tokens)
        self.engine.settings = self.settings
        self.ctx = replace(self.ctx, max_output=self.settings.tool_result_bytes)

    def _on_overflow(self, exc: ContextOverflowError) -> None:
        if exc.n_ctx and exc.n_ctx != self.settings.window:
            self.learn_window(exc.n_ctx)
        self.emit(ev.Notice("the provider says the context is too long; compacting and retrying", "warning"))
        self.fit_context(force=True, shrink=OVERFLOW_SHRINK)

    def switch(self, config: Config) -> None:
        """/model or /mode: the next request uses the new model and mode. Besides /reset, this
        is the one place the prompt prefix may change within a session: the caller rebuilds the
        system message's mode line, and plan mode offers fewer tools (tool_schemas)."""
        self.config = self.provider.config = config
        self.approvals.mode = config.mode

    def reset(self) -> None:
        self.session.record_reset()
        self.messages = [{"role": "system", "content": self.system_for("")}]
        self.engine.reset()
        self.guard.reset()
        self.approvals.reset()


def _first_line(text: str, limit: int = 120) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(empty)"
    return line if len(line) <= limit else line[: limit - 1] + "…"
