"""Token usage of one turn, summed over its requests (the increment, not a running total)."""

from __future__ import annotations

from nanohermes import events as ev


class UsageCounter:
    def __init__(self) -> None:
        self.prompt = self.completion = self.requests = 0
        self.cached: int | None = None  # None until a provider reports cached tokens
        self.sent_chars = self.uncached_chars = 0
        self.reported = True

    def add(self, usage: dict | None, sent_chars: int = 0, uncached_chars: int = 0) -> None:
        self.requests += 1
        self.sent_chars += sent_chars
        self.uncached_chars += uncached_chars
        if not usage:
            self.reported = False
            return
        self.prompt += usage.get("prompt_tokens") or 0
        self.completion += usage.get("completion_tokens") or 0
        if usage.get("cached_tokens") is not None:
            self.cached = (self.cached or 0) + usage["cached_tokens"]

    def event(self) -> ev.Usage:
        return ev.Usage(self.prompt, self.completion, self.requests, self.reported, self.cached,
                        self.sent_chars, self.uncached_chars)
