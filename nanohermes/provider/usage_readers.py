"""A response's `usage` read into one shape, whoever sent it. Pure.

The shape the rest of NanoHermes reads (`Reading.as_dict`): `prompt_tokens` counts EVERY input
token, the cached and written ones among them (as OpenAI reports it), `cached_tokens` and
`cache_write_tokens` are parts of it, never added to it again, and `reported_cost_usd` is the
dollars a gateway billed, when it says (OpenRouter's `cost`).

One small reader per shape, chosen by the fields the usage carries (never by URL or model name):

- OpenAI (vLLM, llama.cpp, LM Studio alike): `prompt_tokens` INCLUDES
  `prompt_tokens_details.cached_tokens`, so a cached token is counted once.
- DeepSeek: `prompt_cache_hit_tokens` + `prompt_cache_miss_tokens` = `prompt_tokens`; the hit
  count is the cached one (some gateways pass a `prompt_tokens_details.cached_tokens` of 0 beside it).
- Anthropic and its gateways: `input_tokens` EXCLUDES `cache_read_input_tokens` and
  `cache_creation_input_tokens` (Anthropic's own reply); a gateway that says `prompt_tokens` beside
  them may have included them (LiteLLM) or not: `_anthropic_prompt` tells which from the numbers.
- OpenRouter: OpenAI's counts, `prompt_tokens_details.cache_write_tokens`, and `cost` in dollars.
- llama.cpp's `timings` (cache_n: prompt tokens it did not evaluate), beside or instead of usage.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_REPORTED_TOKENS = 10**9  # far above any window: a bigger count from a server is garbage, not usage
MAX_REPORTED_COST = 10_000.0  # dollars for one request: far above any; a bigger figure is garbage

DEEPSEEK_FIELDS = ("prompt_cache_hit_tokens", "prompt_cache_miss_tokens")
ANTHROPIC_FIELDS = ("cache_read_input_tokens", "cache_creation_input_tokens", "input_tokens")
OPENROUTER_FIELDS = ("cost", "is_byok", "cost_details")


@dataclass(frozen=True)
class Reading:
    """One request's usage in NanoHermes's shape; None where the server did not say (or said garbage)."""

    prompt: int | None
    completion: int | None
    cached: int | None = None
    written: int | None = None
    reported_cost: float | None = None

    def as_dict(self) -> dict:
        """{} when neither count is usable (a request without a usage report); cached and written
        never more than the prompt holds."""
        prompt, cached, written = self.prompt, self.cached, self.written
        if prompt is None and self.completion is None:
            return {}
        if cached is not None and prompt is not None:
            cached = min(cached, prompt)
        normal: dict = {"prompt_tokens": prompt, "completion_tokens": self.completion, "cached_tokens": cached}
        if written is not None and prompt is not None:
            normal["cache_write_tokens"] = min(written, prompt - (cached or 0))
        if self.reported_cost is not None:
            normal["reported_cost_usd"] = self.reported_cost
        return normal


def normalise_usage(usage: dict, timings: dict | None = None) -> dict:
    """`usage` (any shape above, or this module's own) and llama.cpp's `timings` → Reading.as_dict()."""
    usage = usage if isinstance(usage, dict) else {}
    reading = read_shape(usage)
    if isinstance(timings, dict):
        reading = with_llamacpp_timings(reading, timings)
    return reading.as_dict()


def read_shape(usage: dict) -> Reading:
    """The reader for the fields `usage` carries."""
    if any(name in usage for name in DEEPSEEK_FIELDS):
        return read_deepseek(usage)
    if any(name in usage for name in ANTHROPIC_FIELDS):
        return read_anthropic(usage)
    if any(name in usage for name in OPENROUTER_FIELDS):
        return read_openrouter(usage)
    return read_openai(usage)


def read_openai(usage: dict) -> Reading:
    """prompt_tokens (cached ones included), completion_tokens, prompt_tokens_details.cached_tokens;
    a top-level `cached_tokens` / `cache_write_tokens` is this module's own shape read back."""
    details = _details(usage)
    cached = _first(_count(details.get("cached_tokens")), _count(usage.get("cached_tokens")))
    written = _first(_count(details.get("cache_write_tokens")), _count(usage.get("cache_write_tokens")))
    reported = _dollars(usage.get("reported_cost_usd"))
    return Reading(
        _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")), cached, written, reported
    )


def read_deepseek(usage: dict) -> Reading:
    """The hit count is what was cached; the prompt is hit + miss when prompt_tokens is missing."""
    hit, miss = _count(usage.get("prompt_cache_hit_tokens")), _count(usage.get("prompt_cache_miss_tokens"))
    prompt = _count(usage.get("prompt_tokens"))
    if prompt is None and hit is not None and miss is not None:
        prompt = hit + miss
    cached = _first(hit, _count(_details(usage).get("cached_tokens")))
    return Reading(prompt, _count(usage.get("completion_tokens")), cached)


def read_anthropic(usage: dict) -> Reading:
    """Anthropic's fields, in an Anthropic reply or beside an OpenAI-shaped one (a gateway's)."""
    read, created = _count(usage.get("cache_read_input_tokens")), _count(usage.get("cache_creation_input_tokens"))
    completion = _first(_count(usage.get("completion_tokens")), _count(usage.get("output_tokens")))
    read = _first(read, _count(_details(usage).get("cached_tokens")))
    written = _first(created, _count(_details(usage).get("cache_write_tokens")))
    prompt = _anthropic_prompt(usage, read or 0, written or 0, completion or 0)
    return Reading(prompt, completion, read, written, _dollars(usage.get("cost")))


def _anthropic_prompt(usage: dict, read: int, written: int, completion: int) -> int | None:
    """Every input token. Anthropic's `input_tokens` excludes the cached ones: add them. A gateway's
    `prompt_tokens` included them (LiteLLM) unless it is smaller than they are, or its total_tokens
    adds them again (then it is Anthropic's input_tokens under OpenAI's name)."""
    if "prompt_tokens" not in usage:
        fresh = _count(usage.get("input_tokens"))
        return None if fresh is None else fresh + read + written
    prompt = _count(usage.get("prompt_tokens"))
    if prompt is None:
        return None
    excluded = prompt < read + written or _count(usage.get("total_tokens")) == prompt + read + written + completion
    return prompt + read + written if excluded and read + written else prompt


def read_openrouter(usage: dict) -> Reading:
    """OpenAI's counts (cached included), the cache writes in the details, the dollars billed."""
    plain = read_openai(usage)
    return Reading(plain.prompt, plain.completion, plain.cached, plain.written, _dollars(usage.get("cost")))


def with_llamacpp_timings(reading: Reading, timings: dict) -> Reading:
    """llama.cpp's timings.cache_n (prompt tokens it did not evaluate) as the cached count when
    usage did not say one; the prompt as prompt_n + cache_n when usage had none."""
    cache_n = _count(timings.get("cache_n"))
    if reading.cached is not None or cache_n is None:
        return reading
    prompt = reading.prompt
    if not prompt and _count(timings.get("prompt_n")) is not None:
        prompt = _count(timings["prompt_n"]) + cache_n
    return Reading(prompt, reading.completion, cache_n, reading.written, reading.reported_cost)


def _details(usage: dict) -> dict:
    details = usage.get("prompt_tokens_details")
    return details if isinstance(details, dict) else {}


def _first(*values: int | None) -> int | None:
    return next((value for value in values if value is not None), None)


def _count(value) -> int | None:
    """A whole number of tokens >= 0, or None (a string, an object, a negative, NaN or ∞)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_REPORTED_TOKENS:
        return value
    return None


def _dollars(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_REPORTED_COST:
        return None
    return float(value)
