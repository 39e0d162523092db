"""Every request to the model: one sender, so usage is counted and recorded in one place, and
what a prompt cache could not reuse is measured on exactly what was sent."""

from __future__ import annotations

from collections.abc import Callable

from nanohermes import events as ev
from nanohermes.context import PrefixMeter, SummaryRequest, pairing_problems, sanitize_tool_pairs
from nanohermes.context.budget import SUMMARY_REPLY_TOKENS
from nanohermes.loop.history import NO_RESULT_AFTER_CRASH, ids_in, with_fresh_ids
from nanohermes.loop.misses import MissWatch, Request
from nanohermes.loop.spending import SpendingCap
from nanohermes.loop.turn import Turn
from nanohermes.loop.usage import UsageCounter
from nanohermes.provider import AssistantTurn, Provider
from nanohermes.provider.prices import Prices


class RequestSender:
    def __init__(
        self,
        provider: Provider,
        record_usage: Callable[[dict], None],
        observe: Callable[[dict | None, list[dict], list[dict]], None],
        emit: Callable[[object], None],
    ):
        """`record_usage(dict)` keeps each request's numbers (the session does); `observe(usage,
        sent, tools)` calibrates the token count (the keeper); `emit` reaches the front ends."""
        self.provider, self.record_usage, self.observe, self.emit = provider, record_usage, observe, emit
        self.meter = PrefixMeter()
        self.usage = UsageCounter()  # the running turn's (the Agent gives each turn its own)
        self.spent = UsageCounter()  # the session's, every request since it was opened (/cost)
        self.prices = Prices(provider.config.prices)
        self.misses = MissWatch()
        self.cap = SpendingCap(provider.config.max_cost, emit)  # shared with helper agents (subagents.py)
        self.last_usage: dict = {}  # the latest request's tokens, cached tokens and chars (for /context)
        self._window_asked = False
        self.call_ids: set[str] = set()  # every tool call id of the session so far: a new call never reuses one

    def stream(self, turn: Turn, messages: list[dict], tools: list[dict], **options) -> AssistantTurn:
        """One request of a turn, its reply streamed to the front ends as it comes (a stopped
        run's final answer headed by `turn.mark`) and kept in `turn.streamed` until it is whole."""

        def streamed(text: str) -> None:
            if turn.mark and not turn.streamed:  # the final answer of a stopped run says it is partial
                text = turn.mark + text
            turn.streamed.append(text)
            self.emit(ev.TextDelta(text))

        def restarted() -> None:  # a retried request streams the reply again from its start
            if turn.streamed:  # nothing shown of the failed attempt: nothing to take back
                turn.streamed = []
                self.emit(ev.StreamRestarted())

        turn.streamed = []
        valid = not pairing_problems(messages)
        sent = list(messages) if valid else sanitize_tool_pairs(messages, NO_RESULT_AFTER_CRASH)
        self.emit(ev.RequestStarted())
        turn.usage.begin(sent)
        reply = self.send(sent, tools, streamed, on_restart=restarted, **options)
        self.call_ids |= ids_in(messages)  # and those compacted away since, kept below
        reply.tool_calls = with_fresh_ids(reply.tool_calls, self.call_ids)
        self.observe(reply.usage, sent, tools)
        turn.streamed = []
        return reply

    def send(
        self,
        messages: list[dict],
        tools: list[dict],
        on_text: Callable[[str], None],
        *,
        summary: bool = False,
        **options,
    ) -> AssistantTurn:
        """Stream one request; count its usage, its cost and what a prefix cache could not reuse;
        say when its cached share fell (a CacheMiss)."""
        sent_chars, uncached_chars = self.meter.measure(tools, messages)
        config, started = self.provider.config, self.misses.clock()
        model = options.get("model") or config.model
        self.prices.warm(model)
        turn = self.provider.stream_chat(messages, tools, on_text, **options)
        usage = turn.usage or {}
        cost = self.prices.cost(model, usage)
        for counter in (self.usage, self.spent):
            counter.add(turn.usage, sent_chars, uncached_chars, cost)
        self.cap.add(cost, model)
        self.last_usage = {
            "summary": summary,
            "model": model,
            "prompt_tokens": usage.get("prompt_tokens"),
            "completion_tokens": usage.get("completion_tokens"),
            "cached_tokens": usage.get("cached_tokens"),
            "cache_write_tokens": usage.get("cache_write_tokens"),
            "cost_usd": cost,
            "sent_chars": sent_chars,
            "uncached_chars": uncached_chars,
        }
        self.record_usage(self.last_usage)
        request = Request(model, config.mode, summary, usage, self.meter.changed, started)
        if (miss := self.misses.see(request)) is not None:
            self.emit(miss)
        return turn

    def sample(self, messages: list[dict], max_tokens: int) -> tuple[str, str, str]:
        """A request outside the conversation (an MCP server's sampling): tools off, no retry, not
        shown; its tokens are the turn's and the session's, and the prefix meter is left alone (it
        measures the conversation's requests). (text, model, finish reason)."""
        model = self.provider.config.model
        self.prices.warm(model)
        self.cap.check()  # a server's sampling spends the session's dollars too
        turn = self.provider.stream_chat(messages, [], _ignore, max_tokens=max_tokens, retries=0)
        usage = turn.usage or {}
        cost = self.prices.cost(model, usage)
        for counter in (self.usage, self.spent):
            counter.add(turn.usage, cost=cost)
        self.cap.add(cost, model)
        tokens = {k: usage.get(k) for k in ("prompt_tokens", "completion_tokens", "cached_tokens")}
        self.record_usage({"summary": False, "sampling": True, "model": model, **tokens, "cost_usd": cost})
        return turn.as_message()["content"], model, turn.finish_reason or "stop"

    def count_helper(self, usage: ev.Usage) -> None:
        """A helper agent's dollars are this turn's and this session's (its tokens stay its own line)."""
        for counter in (self.usage, self.spent):
            counter.add_cost(usage)

    def summarize(self, request: SummaryRequest, tools: list[dict], max_tokens: int) -> str:
        """One summary request, as the context engine planned it; raises when no summary came
        back. Reusing the conversation's prefix means its tools too, with tool calls off."""
        options = dict(summary=True, max_tokens=min(SUMMARY_REPLY_TOKENS, max_tokens), retries=0, temperature=0)
        if request.reuses_prefix:
            options.update(tool_choice="none")
        else:
            tools, options["model"] = [], self.provider.config.effective_summary_model
        self.emit(ev.SummaryStarted())  # the front ends say "compacting context…" while it runs
        try:
            turn = self.send(request.messages, tools, _ignore, **options)
        except BaseException:
            self.emit(ev.SummaryFinished(ok=False))
            raise
        self.emit(ev.SummaryFinished())
        if turn.tool_calls and not turn.content.strip():
            raise ValueError("the summariser called a tool instead of writing the summary")
        return turn.content

    def advertised_window(self) -> int | None:
        """The window the server advertises, asked once (llama.cpp and vLLM tell; most don't)."""
        if self._window_asked:
            return None
        self._window_asked = True
        return self.provider.advertised_context_window()


def _ignore(text: str) -> None:
    """Summary text is not shown while it streams."""
