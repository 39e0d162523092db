"""Keeping the context: the loop's side of the context engine.

The ContextKeeper sends every request (so it can measure what a prompt cache could reuse and
record usage), keeps the settings for the model's window as one value, asks the engine to
fit the working set before each request and after tool results, and makes the summary
requests the engine plans.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from nanohermes import events as ev
from nanohermes.context import ContextEngine, PrefixMeter, PromptTokenTracker, SummaryRequest, settings_for_window
from nanohermes.context.budget import SUMMARY_REPLY_TOKENS
from nanohermes.errors import ContextOverflowError
from nanohermes.loop.usage import UsageCounter
from nanohermes.memory.entry_points import save_candidates
from nanohermes.provider import AssistantTurn, Provider
from nanohermes.tools import ToolContext

if TYPE_CHECKING:
    from nanohermes.loop.agent import Agent


class ContextKeeper:
    def __init__(self, agent: Agent, provider: Provider, ctx: ToolContext, recall_offered: bool = False):
        self.agent, self.provider, self.config = agent, provider, agent.config
        self.same_summary_model = self.config.effective_summary_model == self.config.model
        self.settings = settings_for_window(None, self.config.max_tokens, self.same_summary_model)
        self.engine = ContextEngine(self.settings)
        self.engine.ask_for_memories = self.config.auto_memory and ctx.memory is not None  # memory before forgetting
        self.tokens = PromptTokenTracker()
        self.meter = PrefixMeter()
        self.ctx = ctx
        self.recall_offered = recall_offered  # recall joins the tool list at the first compaction
        self.usage = UsageCounter()
        self.last_usage: dict = {}  # the latest request's tokens, cached tokens and chars (for /context)
        self._window_probed = False
        self._last_notice = ""
        if self.config.context_window:
            self.learn_window(self.config.context_window)

    def start_turn(self) -> UsageCounter:
        self.usage = UsageCounter()
        return self.usage

    # -- requests ---------------------------------------------------------------------------

    def send(
        self,
        messages: list[dict],
        tools: list[dict],
        on_text: Callable[[str], None],
        *,
        summary: bool = False,
        **options,
    ) -> AssistantTurn:
        """Stream one request; count its usage and what a prefix cache could not reuse."""
        sent_chars, uncached_chars = self.meter.measure(tools, messages)
        options.setdefault("max_tokens", self.settings.max_tokens)
        turn = self.provider.stream_chat(messages, tools, on_text, **options)
        self.usage.add(turn.usage, sent_chars, uncached_chars)
        usage = turn.usage or {}
        self.last_usage = {
            "summary": summary,
            "prompt_tokens": usage.get("prompt_tokens"),
            "completion_tokens": usage.get("completion_tokens"),
            "cached_tokens": usage.get("cached_tokens"),
            "sent_chars": sent_chars,
            "uncached_chars": uncached_chars,
        }
        self.agent.session.record_usage(self.last_usage)
        if not summary and self.settings.window and usage.get("prompt_tokens"):
            # Only a known window has a token trigger; counting loads a ~0.3 s encoding.
            self.tokens.record_usage(usage["prompt_tokens"], messages)
        return turn

    def summarize(self, request: SummaryRequest) -> str:
        """One summary request, as the engine planned it; raises when no summary came back."""
        max_tokens = min(SUMMARY_REPLY_TOKENS, self.settings.max_tokens)
        self.agent.emit(ev.SummaryStarted())  # the front ends say "compacting context…" while it runs
        try:
            if request.reuses_prefix:  # the conversation's own prefix: the same tools, tool calls off
                turn = self.send(
                    request.messages,
                    self.agent.tool_schemas(),
                    _ignore,
                    summary=True,
                    max_tokens=max_tokens,
                    retries=0,
                    temperature=0,
                    tool_choice="none",
                )
            else:
                turn = self.send(
                    request.messages,
                    [],
                    _ignore,
                    summary=True,
                    max_tokens=max_tokens,
                    retries=0,
                    temperature=0,
                    model=self.config.effective_summary_model,
                )
        except BaseException:
            self.agent.emit(ev.SummaryFinished(ok=False))
            raise
        self.agent.emit(ev.SummaryFinished())
        if turn.tool_calls and not turn.content.strip():
            raise ValueError("the summariser called a tool instead of writing the summary")
        return turn.content

    # -- fitting ----------------------------------------------------------------------------

    def fit(self, force: bool = False, focus: str | None = None, overflow_tokens: int | None = None):
        """Keep what is sent within the window; record and announce any change. Returns the
        report (None: nothing to do). `overflow_tokens`: the provider rejected the prompt as that
        long (or just too long, 0), so compaction goes deep and cannot resend the conversation."""
        agent = self.agent
        estimate = self.tokens.estimate(agent.messages) if self.settings.window or overflow_tokens is not None else None
        if overflow_tokens:
            estimate = max(estimate or 0, overflow_tokens)
        new, report = self.engine.fit(
            agent.messages,
            self.summarize,
            force=force,
            focus=focus,
            token_estimate=estimate,
            facts=self.ctx.outputs.facts(),
            overflow=overflow_tokens is not None,
        )
        if report is None:
            return None
        remembered = self._remember(report.memories) if report.layers else []
        if report.layers:  # something changed (an over-limit check that could do nothing did not)
            old, agent.messages = agent.messages, new
            self.recall_offered = True
            agent.session.record_compaction(
                old[1:],
                new[1:],
                {
                    "layers": report.layers,
                    "forced": force,
                    "before_chars": report.before_chars,
                    "after_chars": report.after_chars,
                    "replaced_messages": len(report.dropped),
                    "cleared_outputs": report.placeholder_ids,
                    "summary_reused_prefix": report.summary_reused_prefix,
                    **({"memories": [e.id for e in remembered]} if remembered else {}),
                },
            )
        line = report.one_line()
        if (report.layers or report.notices) and line != self._last_notice:  # say it once, not every step
            self._last_notice = line
            agent.emit(ev.Notice(line, "warning" if report.over_budget or report.thrash_skipped else "info"))
        if remembered:
            listed = "; ".join(f"[{e.kind}] {e.text}" for e in remembered)
            agent.emit(ev.Notice(f"remembered from the compacted messages (/memory list auto): {listed}"))
        return report

    def _remember(self, candidates) -> list:
        """What the summary found worth keeping in the dropped messages, added to memory as
        automatic entries (a near-duplicate of what memory holds is not added). The new entries."""
        saved = save_candidates(self.ctx.memory, candidates)
        if saved.error:
            self.agent.emit(ev.Notice(saved.error, "warning"))
        return saved.added

    def on_overflow(self, exc: ContextOverflowError) -> None:
        if exc.n_ctx and exc.n_ctx != self.settings.window:
            self.learn_window(exc.n_ctx)
        self.agent.emit(ev.Notice("the provider says the context is too long; compacting and retrying", "warning"))
        self.fit(force=True, overflow_tokens=exc.n_prompt or self.settings.window or 0)

    # -- the window -------------------------------------------------------------------------

    def learn_advertised_window(self) -> None:
        if self.settings.window is None and not self._window_probed:
            self._window_probed = True  # once: llama.cpp and vLLM advertise it, most others don't
            n_ctx = self.provider.advertised_context_window()
            if n_ctx:
                self.learn_window(n_ctx)

    def learn_window(self, n_ctx: int) -> None:
        """Scale the marks, the tool cap and max_tokens to a model's context window (tokens)."""
        self.settings = settings_for_window(n_ctx, self.config.max_tokens, self.same_summary_model)
        self.engine.settings = self.settings
        self.ctx = replace(self.ctx, max_output=self.settings.tool_result_bytes)

    def switch(self, config) -> None:
        """A /model or /mode switch: the next request goes to the new model (its window, once
        learned, is kept: a model of the same server shares it)."""
        self.config = self.provider.config = config
        self.same_summary_model = config.effective_summary_model == config.model
        self.settings = replace(self.settings, summary_reuses_prefix=self.same_summary_model)
        self.engine.settings = self.settings

    def reset(self) -> None:
        self.engine.reset()


def _ignore(text: str) -> None:
    """Summary text is not shown while it streams."""
