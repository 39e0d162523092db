"""Token usage of one turn, summed over its requests (the increment, not a running total)."""

from __future__ import annotations

from nanohermes import events as ev


class UsageCounter:
    def __init__(self) -> None:
        self.prompt = self.completion = self.requests = 0
        self.reported = True

    def add(self, usage: dict | None) -> None:
        self.requests += 1
        if not usage:
            self.reported = False
            return
        self.prompt += usage.get("prompt_tokens") or 0
        self.completion += usage.get("completion_tokens") or 0

    def event(self) -> ev.Usage:
        return ev.Usage(self.prompt, self.completion, self.requests, self.reported)
