"""Token usage of one turn, summed over its requests (the increment, not a running total)."""

from __future__ import annotations

from collections.abc import Callable

from nanohermes import events as ev
from nanohermes.context.tokens import estimate_tokens_by_ratio


class UsageCounter:
    def __init__(self) -> None:
        self.prompt = self.completion = self.requests = 0
        self.cached: int | None = None  # None until a provider reports cached tokens
        self.written: int | None = None  # None until a provider reports cache writes
        self.cost = 0.0  # dollars of the requests that had a price
        self.priced = self.unpriced = 0  # requests with usage (or an estimate), with and without a price
        self.sent_chars = self.uncached_chars = 0
        self.unreported = 0  # requests the server sent no usage for (or whose stream was closed before it)
        self.last: int | None = None  # prompt + reply of the latest request
        self.estimated = False
        self._pending: list[dict] | None = None

    def begin(self, sent: list[dict]) -> None:
        """A request with these messages is on its way; if it is interrupted, `interrupted` estimates it."""
        self._pending = sent

    def add(self, usage: dict | None, sent_chars: int = 0, uncached_chars: int = 0, cost: float | None = None) -> None:
        """One request's reported `usage` and its `cost` in dollars (None: its model has no price)."""
        self._pending = None
        self.requests += 1
        self.sent_chars += sent_chars
        self.uncached_chars += uncached_chars
        if not usage:
            self.unreported += 1
            return
        prompt, completion = usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0
        self.prompt += prompt
        self.completion += completion
        self.last = prompt + completion
        if usage.get("cached_tokens") is not None:
            self.cached = (self.cached or 0) + usage["cached_tokens"]
        if usage.get("cache_write_tokens") is not None:
            self.written = (self.written or 0) + usage["cache_write_tokens"]
        if cost is None:
            self.unpriced += 1
        else:
            self.cost, self.priced = self.cost + cost, self.priced + 1

    def add_cost(self, usage: ev.Usage) -> None:
        """A helper's dollars (the `task` tool's turn): paid by this turn, its tokens its own."""
        if usage.cost_usd is not None:
            self.cost, self.priced = self.cost + usage.cost_usd, self.priced + 1
        self.unpriced += usage.unpriced

    def interrupted(self, estimate_prompt: Callable[[list[dict]], int], reply: str) -> None:
        """Ctrl-C during a request: the server did the work but never said how much, so count an
        estimate (the prompt as sent, the reply received so far) instead of nothing."""
        if self._pending is None:
            return
        prompt, reply_tokens = estimate_prompt(self._pending), estimate_tokens_by_ratio(reply)
        self._pending = None
        self.requests += 1
        self.prompt += prompt
        self.completion += reply_tokens
        self.last = prompt + reply_tokens
        self.estimated = True
        self.unpriced += 1  # the server did the work, but no count came to price

    def event(self) -> ev.Usage:
        # One reply cut for repeating has no usage (its stream was closed): the rest still count.
        reported = self.unreported < self.requests or not self.requests
        return ev.Usage(
            self.prompt,
            self.completion,
            self.requests,
            reported,
            self.cached,
            self.sent_chars,
            self.uncached_chars,
            last_request_tokens=self.last,
            estimated=self.estimated,
            unreported=self.unreported if reported else 0,
            cache_write_tokens=self.written,
            cost_usd=self.cost if self.priced else None,
            unpriced=self.unpriced,
        )
