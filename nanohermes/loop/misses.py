"""A cache miss explained: when a request's cached share falls well below the one before's, what
changed in the prefix (the prefix meter's first difference, a mode or model switch, a compaction)
or, when nothing did, that the provider's cache likely expired while the session sat idle.

The loop only says it with an event (events.CacheMiss); the front ends word it (cost.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from nanohermes import events as ev
from nanohermes.context.cache import MESSAGES, SYSTEM, TOOLS

# A fall of at least this many points of the prompt's share is a miss worth a line: a share
# that drifts by a few points is the provider's block granularity (OpenAI caches 128-token
# blocks), not a lost cache.
MISS_DROP = 0.3
# Below this share the previous request was not really served from a cache: nothing was lost.
MIN_PREVIOUS_SHARE = 0.5
# Providers keep a prompt cache for minutes (Anthropic 5 by default, OpenAI 5 to 10 idle, up to
# an hour off-peak): after this long idle, an unchanged prefix that missed is taken as expired.
CACHE_TTL_S = 5 * 60


@dataclass(frozen=True)
class Request:
    """One request as the miss watch needs it."""

    model: str
    mode: str
    summary: bool  # a compaction's summary request
    usage: dict  # the normalised usage (provider/usage_readers.py: DeepSeek, Anthropic and OpenRouter shapes alike)
    changed: str | None  # PrefixMeter.changed
    started: float  # time.monotonic() when it was sent


class MissWatch:
    """see(request) after each request → a CacheMiss to emit, or None."""

    def __init__(self, clock=time.monotonic) -> None:
        self.clock = clock
        self._previous: Request | None = None  # the last request of the conversation (not a summary)
        self._ended = 0.0
        self._summarised = False  # a summary request came since (its prefix is not the conversation's)

    def see(self, request: Request) -> ev.CacheMiss | None:
        ended, self._ended = self._ended, self.clock()
        if request.summary:
            self._summarised = True
            return None
        previous, summarised = self._previous, self._summarised
        self._previous, self._summarised = request, False
        before, now = _share(previous.usage) if previous else None, _share(request.usage)
        if before is None or now is None or before < MIN_PREVIOUS_SHARE or before - now < MISS_DROP:
            return None
        cause, was, is_now = _cause(previous, request, summarised, request.started - ended)
        idle = max(0, round((request.started - ended) / 60))
        return ev.CacheMiss(now, before, cause, idle, was, is_now)


def _share(usage: dict) -> float | None:
    prompt, cached = usage.get("prompt_tokens"), usage.get("cached_tokens")
    return cached / prompt if prompt and cached is not None else None


def _cause(previous: Request, request: Request, summarised: bool, idle_s: float) -> tuple[ev.MissCause, str, str]:
    """The first thing that made the prefix differ, in the order it reaches the provider."""
    if previous.model != request.model:
        return ev.MissCause.MODEL, previous.model, request.model
    if previous.mode != request.mode:
        return ev.MissCause.MODE, previous.mode, request.mode
    if summarised:
        return ev.MissCause.COMPACTION, "", ""
    changed = {TOOLS: ev.MissCause.TOOLS, SYSTEM: ev.MissCause.SYSTEM, MESSAGES: ev.MissCause.COMPACTION}
    if request.changed in changed:
        return changed[request.changed], "", ""
    return (ev.MissCause.IDLE if idle_s >= CACHE_TTL_S else ev.MissCause.UNKNOWN), "", ""
