"""The REPL's line after each turn: tokens in and out, how full the context is, how much the
provider served from its cache, what it cost, how long the turn took, and the session's totals. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from nanohermes import events as ev
from nanohermes.cost import UNKNOWN, cost_text
from nanohermes.ui.progress import elapsed


@dataclass
class SessionTotals:
    """Tokens used since the REPL started (the provider's counts, plus estimates after Ctrl-C)."""

    prompt: int = 0
    completion: int = 0
    requests: int = 0
    estimated: bool = False
    cost: float = 0.0  # dollars of the priced requests
    priced: bool = False  # some request had a price
    unpriced: int = 0  # requests with usage but no price for their model

    def add(self, usage: ev.Usage | None) -> None:
        if usage is None:
            return
        self.prompt += usage.prompt_tokens
        self.completion += usage.completion_tokens
        self.requests += usage.requests
        self.estimated = self.estimated or usage.estimated
        if usage.cost_usd is not None:
            self.cost, self.priced = self.cost + usage.cost_usd, True
        self.unpriced += usage.unpriced

    def cost_text(self) -> str:
        """The session's dollars as cost.cost_text says a turn's."""
        return cost_text(ev.Usage(0, 0, 0, cost_usd=self.cost if self.priced else None, unpriced=self.unpriced))


def _short(tokens: int) -> str:
    """16,384 → 16k, 131,072 → 128k, 1,000,000 → 977k: a window's size at a glance."""
    return f"{tokens // 1024}k" if tokens >= 1024 else str(tokens)


def _fullness(usage: ev.Usage, window: int | None, budget_share: float | None) -> str | None:
    if window and usage.last_request_tokens:
        return f"{100 * usage.last_request_tokens / window:.0f}% of {_short(window)} window"
    if budget_share is not None:
        return f"context {100 * budget_share:.0f}% full"
    return None


def _priced(text: str) -> str:
    return "cost unknown" if text == UNKNOWN else text


def turn_line(
    usage: ev.Usage | None, *, window: int | None, budget_share: float | None, seconds: float, totals: SessionTotals
) -> str:
    """`1,756 in · 257 out · 3 requests · 14% of 16k window · 80% cached · $0.000345 · 4.2s ·
    session 9,120 in / 1,001 out / $0.0021` (`cost unknown` for a model without a price).

    `budget_share`: how full the context is against where compaction starts, said when the window is not known."""
    parts: list[str] = []
    if usage is not None and usage.requests:
        mark = "~" if usage.estimated else ""
        if usage.reported or usage.estimated:
            parts += [f"{mark}{usage.prompt_tokens:,} in", f"{mark}{usage.completion_tokens:,} out"]
        parts.append(f"{usage.requests} request{'s' if usage.requests != 1 else ''}")
        if not usage.reported and not usage.estimated:
            parts.append("the server reported no token usage")
        elif usage.unreported:
            parts.append(f"{usage.unreported} without a usage report")
        fullness = _fullness(usage, window, budget_share)
        if fullness:
            parts.append(fullness)
        if usage.cached_tokens is not None and usage.prompt_tokens:
            parts.append(f"{100 * usage.cached_tokens / usage.prompt_tokens:.0f}% cached")
        if usage.reported:
            parts.append(_priced(cost_text(usage)))
    parts.append(elapsed(seconds))
    mark = "~" if totals.estimated else ""
    parts.append(
        f"session {mark}{totals.prompt:,} in / {mark}{totals.completion:,} out / {_priced(totals.cost_text())}"
    )
    line = " · ".join(parts)
    if usage is not None and usage.estimated:
        line += " (~ estimated: the request was interrupted before the server said)"
    return line
