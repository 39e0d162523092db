"""Token usage of one turn, summed over its requests (the increment, not a running total)."""

from __future__ import annotations

from typing import Callable

from nanohermes import events as ev


class UsageCounter:
    def __init__(self) -> None:
        self.prompt = self.completion = self.requests = 0
        self.reported = True
        self.cached: int | None = None
        self.last: int | None = None
        self.estimated = False
        self._pending: list[dict] | None = None

    def begin(self, sent: list[dict]) -> None:
        """A request with these messages is on its way; if it is interrupted, `interrupted` estimates it."""
        self._pending = sent

    def add(self, usage: dict | None) -> None:
        self._pending = None
        self.requests += 1
        if not usage:
            self.reported = False
            return
        prompt, completion = usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0
        self.prompt += prompt
        self.completion += completion
        self.last = prompt + completion
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        if isinstance(cached, int):
            self.cached = (self.cached or 0) + cached

    def interrupted(self, estimate_prompt: Callable[[list[dict]], int], reply_tokens: int) -> None:
        """Ctrl-C during a request: the server did the work but never said how much, so count an
        estimate (the prompt as sent, the reply received so far) instead of nothing."""
        if self._pending is None:
            return
        prompt = estimate_prompt(self._pending)
        self._pending = None
        self.requests += 1
        self.prompt += prompt
        self.completion += reply_tokens
        self.last = prompt + reply_tokens
        self.estimated = True

    def event(self) -> ev.Usage:
        return ev.Usage(self.prompt, self.completion, self.requests, self.reported,
                        cached_tokens=self.cached, last_request_tokens=self.last, estimated=self.estimated)
