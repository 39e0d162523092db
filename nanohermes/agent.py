"""The loop: user input → (fit context → request → tool calls)* → answer.

One small class owns the conversation. Leaving the loop early is a small exception hierarchy
(StopTurn) whose instances say why; the renderers see only events.
"""

from __future__ import annotations

import json
from typing import Callable

from nanohermes import events as ev
from nanohermes.config import Config
from nanohermes.context import (
    ContextEngine, PromptTokenTracker, budget_for_window, pairing_problems, prompt_token_limit, reply_reserve,
    sanitize_tool_pairs,
)
from nanohermes.errors import ContextOverflowError
from nanohermes.provider import AssistantTurn, Provider
from nanohermes.session import Session
from nanohermes.errors import ToolError
from nanohermes.tools import Tool, ToolContext, ToolResult, dispatch, parse_arguments

INTERRUPTED = "[interrupted by user]"
NO_ANSWER = "[no answer: the request failed]"
NO_RESULT_AFTER_CRASH = "[no result: the previous run ended before this call finished]"
REPEAT_LIMIT = 3  # the same call this many times in a row gets a refusal instead of a result
REPEAT_STOP = 5  # ...and this many ends the run: the model is stuck
MAX_OVERFLOW_RETRIES = 2  # compact-and-retry attempts after a context-length error
MAX_LENGTH_RETRIES = 2  # replies cut by max_tokens mid tool call
OVERFLOW_SHRINK = 0.7  # after an overflow error the retry must be clearly smaller, not just "under budget"
SUMMARY_MAX_TOKENS = 800  # 300 words is ~400 tokens; room for a model that overshoots a little

Approver = Callable[[Tool, dict, str], str]  # returns "yes" | "no" | "always"


class StopTurn(Exception):
    """Ends the turn early; the message says why (shown to the user)."""


class Agent:
    def __init__(
        self, *, config: Config, provider: Provider, session: Session, tools: list[Tool],
        ctx: ToolContext, system_for: Callable[[str], str], emit: Callable[[object], None],
        approve: Approver | None, window: int | None = None,
    ):
        self.config = config
        self.provider = provider
        self.session = session
        self.ctx = ctx
        self.system_for = system_for
        self.emit = emit
        self.approve = approve
        self.engine = ContextEngine()
        self.tokens = PromptTokenTracker()
        self.window: int | None = None
        self._probed_window = False
        self._last_notice = ""
        self.recall_useful = session.state.cut_or_cleared
        self.tools = {t.name: t for t in tools if config.mode != "plan" or not t.needs_approval}
        self.always_allowed: set[str] = set()
        self.outputs: dict[str, str] = session.state.outputs
        ctx.services["outputs"] = self.outputs
        self.messages: list[dict] = [{"role": "system", "content": system_for("")}, *session.state.messages]
        self._recent_calls: list[str] = []
        self._partial: list[str] = []
        if window:
            self.set_window(window)
        self._answer_open_calls(NO_RESULT_AFTER_CRASH)  # a run killed mid-tool left calls unanswered

    # -- the turn ---------------------------------------------------------------------------

    def run_turn(self, user_text: str) -> ev.TurnResult:
        """Run one user request to its answer. KeyboardInterrupt ends it with a valid history."""
        usage = _UsageCounter()
        steps = 0
        try:
            self._start_turn(user_text)
            while True:
                if steps >= self.config.max_steps:
                    raise StopTurn(f"Stopped after {steps} steps (--max-steps {self.config.max_steps}); the task may be unfinished.")
                self.fit_context()
                turn = self._request_with_recovery(usage)
                steps += 1
                if turn.finish_reason == "length" and turn.tool_calls:
                    self._reject_cut_tool_call(turn, usage)
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
            return ev.TurnResult(str(stop), steps, usage.event(), stopped_reason="limit")
        except KeyboardInterrupt:  # streaming, a tool, or between the two: every call gets a result
            self._answer_open_calls(INTERRUPTED)
            self._close_interrupted_stream()
            return ev.TurnResult(INTERRUPTED, steps, usage.event(), stopped_reason="interrupted")

    def _start_turn(self, user_text: str) -> None:
        if self.window is None and not self._probed_window:
            self._probed_window = True  # once: llama.cpp advertises n_ctx, most others don't
            n_ctx = self.provider.advertised_context_window()
            if n_ctx:
                self.set_window(n_ctx)
        self._recent_calls = []  # a new request may follow changes: old repeats don't count
        self.messages[0] = {"role": "system", "content": self.system_for(user_text)}
        if self.messages[-1]["role"] == "user":  # the last turn failed before any answer:
            self._append({"role": "assistant", "content": NO_ANSWER})  # strict templates need alternation
        self._append({"role": "user", "content": user_text})

    def _request_with_recovery(self, usage: "_UsageCounter") -> AssistantTurn:
        """Stream one reply; on a context-length error compact and retry (bounded)."""
        for attempt in range(MAX_OVERFLOW_RETRIES + 1):
            self._partial = []
            sent = self._for_prompt()
            try:
                turn = self.provider.stream_chat(sent, self.tool_schemas(), self._on_text, self._on_restart)
            except ContextOverflowError as exc:
                if attempt == MAX_OVERFLOW_RETRIES:
                    raise
                self.on_overflow(exc)
                continue
            self._partial = []
            usage.add(turn.usage)
            if self.window and turn.usage and turn.usage.get("prompt_tokens"):
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

    def _for_prompt(self) -> list[dict]:
        """What to send: the history, with any broken call/result pairing mended (a safety net:
        the loop keeps pairs valid, but a provider rejects a broken history outright)."""
        if pairing_problems(self.messages):
            return sanitize_tool_pairs(self.messages, stub=NO_RESULT_AFTER_CRASH)
        return list(self.messages)

    def _reject_cut_tool_call(self, turn: AssistantTurn, usage: "_UsageCounter") -> None:
        """A tool call cut by max_tokens is broken JSON: never run it, ask for a shorter one."""
        usage.length_cuts += 1
        if usage.length_cuts > MAX_LENGTH_RETRIES:
            raise StopTurn("The model's replies keep hitting max_tokens in the middle of a tool call; stopped. Raise max_tokens or ask for smaller steps.")
        self.emit(ev.Notice("reply cut by max_tokens mid tool call; asking the model to retry", "warning"))
        self._append({"role": "assistant", "content": turn.content})  # "" keeps roles alternating
        self._append({"role": "user", "content": (
            "[Your last reply was cut off by the output token limit in the middle of a tool call, so it was not run. "
            "Call the tool again with shorter arguments (e.g. write a large file in several smaller edits).]"
        )})

    # -- tools ------------------------------------------------------------------------------

    def tool_schemas(self) -> list[dict]:
        """What the model is offered. `recall` only once something was cut or cleared: before
        that it has nothing to return, and small models call whatever is on offer."""
        return [t.schema() for t in self.tools.values() if t.name != "recall" or self.recall_useful]

    def _run_tool_calls(self, turn: AssistantTurn) -> None:
        """Run the calls in order. On Ctrl-C, run_turn gives the unanswered ones a result."""
        self.emit(ev.AssistantMessageDone(turn.content, True))
        for call in turn.tool_calls:
            fn = call["function"]
            self.emit(ev.ToolStarted(call["id"], fn["name"], fn["arguments"]))
            result = self._run_one(fn["name"], fn["arguments"])
            self._append_tool_result(call["id"], result)
            self.emit(ev.ToolFinished(call["id"], fn["name"], _one_line(result.content), result.ok))
        if self._repeats() >= REPEAT_STOP:
            raise StopTurn("Stopped: the model kept repeating the same tool call with the same arguments.")

    def _run_one(self, name: str, arguments: str) -> ToolResult:
        key = _call_key(name, arguments)
        self._recent_calls = (self._recent_calls + [key])[-2 * REPEAT_STOP :]
        if self._repeats() >= REPEAT_LIMIT:
            text = (f"error: this is repeat number {self._repeats()} of the same {name} call (with the same arguments) "
                    "in a loop; the result will not change. Try a different approach (other arguments, another tool, or answer).")
            return ToolResult(text, text, ok=False)
        tool = self.tools.get(name)
        if tool is not None and tool.needs_approval and not self._approved(tool, arguments):
            return self._refusal(tool)
        return dispatch(self.ctx, self.tools, name, arguments)

    def _repeats(self) -> int:
        """How many times the latest call repeats a loop: the same call again and again (A A A),
        or two calls taking turns (A B A B A). Small models get stuck in both."""
        keys = self._recent_calls
        if not keys:
            return 0
        same = 1
        while same < len(keys) and keys[-1 - same] == keys[-1]:
            same += 1
        turns = 1
        if len(keys) >= 2 and keys[-2] != keys[-1]:
            while len(keys) >= 2 * turns + 1 and keys[-1 - 2 * turns] == keys[-1] and keys[-2 * turns] == keys[-2]:
                turns += 1
        return max(same, turns)

    def _approved(self, tool: Tool, arguments: str) -> bool:
        if self.config.mode == "auto" or tool.name in self.always_allowed:
            return True
        if self.approve is None:
            return False
        try:
            args = parse_arguments(tool, arguments)
        except ToolError:
            return True  # dispatch will reject the same arguments; nothing can run
        try:
            preview = tool.preview(self.ctx, **args) if tool.preview else json.dumps(args)[:500]
        except Exception as exc:  # a broken preview must never skip the question
            preview = f"(no preview: {type(exc).__name__}) {json.dumps(args, ensure_ascii=False)[:500]}"
        answer = self.approve(tool, args, preview)
        if answer == "always":
            self.always_allowed.add(tool.name)
        return answer in ("yes", "always")

    def _refusal(self, tool: Tool) -> ToolResult:
        if self.approve is None:
            text = (f"refused: {tool.name} needs the user's approval and this non-interactive run cannot ask. "
                    "It was not run. The user can allow it by re-running with --yes (or --mode auto).")
        else:
            text = f"refused: the user declined this {tool.name} call; it was not run. Ask or try another way."
        return ToolResult(text, text, ok=False)

    def _append_tool_result(self, call_id: str, result: ToolResult) -> None:
        self._append({"role": "tool", "tool_call_id": call_id, "content": result.content})
        self.outputs[call_id] = result.full  # recall's source, also after placeholders replace it
        if result.full != result.content:  # the message event already holds the rest
            self.session.record_tool_output(call_id, result.full)
            self.recall_useful = True

    # -- history ----------------------------------------------------------------------------

    def _append(self, message: dict) -> None:
        self.messages.append(message)
        self.session.record_message(message)

    def _answer_open_calls(self, text: str) -> None:
        """Give every call of the last assistant message that has no result one, so the
        history stays valid whatever stopped the run."""
        for i in range(len(self.messages) - 1, 0, -1):
            message = self.messages[i]
            if message.get("role") == "assistant":
                answered = {m.get("tool_call_id") for m in self.messages[i + 1 :] if m.get("role") == "tool"}
                for call in message.get("tool_calls") or []:
                    if call.get("id") not in answered:
                        self._append({"role": "tool", "tool_call_id": call.get("id"), "content": text})
                return
            if message.get("role") != "tool":
                return

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
        limit = prompt_token_limit(self.window, self.config.max_tokens) if self.window else None
        estimate = self.tokens.estimate(self.messages) if limit or shrink else None
        if shrink:
            limit = min(limit or estimate, int(estimate * shrink))
        new, report = self.engine.fit(self.messages, self._summarize, force=force, focus=focus,
                                      token_estimate=estimate, token_limit=limit)
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
        max_tokens = min(SUMMARY_MAX_TOKENS, self.provider.max_tokens)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user_text}]
        return self.provider.complete(messages, model=self.config.effective_summary_model, max_tokens=max_tokens, retries=0).content

    def set_window(self, n_ctx: int) -> None:
        """Scale the budget, the tool cap and max_tokens to a model's context window (tokens)."""
        self.window = n_ctx
        self.engine.budget_chars, self.ctx.max_output = budget_for_window(n_ctx, self.config.max_tokens)
        self.provider.max_tokens = reply_reserve(n_ctx, self.config.max_tokens)

    def on_overflow(self, exc: ContextOverflowError) -> None:
        if exc.n_ctx and exc.n_ctx != self.window:
            self.set_window(exc.n_ctx)
        self.emit(ev.Notice("the provider says the context is too long; compacting and retrying", "warning"))
        self.fit_context(force=True, shrink=OVERFLOW_SHRINK)

    def reset(self) -> None:
        self.session.record_reset()
        self.messages = [{"role": "system", "content": self.system_for("")}]
        self.engine.reset()
        self._recent_calls = []


class _UsageCounter:
    def __init__(self):
        self.prompt = self.completion = self.requests = 0
        self.reported = True
        self.length_cuts = 0

    def add(self, usage: dict | None) -> None:
        self.requests += 1
        if not usage:
            self.reported = False
            return
        self.prompt += usage.get("prompt_tokens") or 0
        self.completion += usage.get("completion_tokens") or 0

    def event(self) -> ev.Usage:
        return ev.Usage(self.prompt, self.completion, self.requests, self.reported)


def _call_key(name: str, arguments: str) -> str:
    try:
        return name + json.dumps(json.loads(arguments or "{}"), sort_keys=True)
    except json.JSONDecodeError:
        return name + arguments


def _one_line(text: str, limit: int = 120) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(empty)"
    return line if len(line) <= limit else line[: limit - 1] + "…"
