"""/cost: what this session has cost so far, the last request, and the prices they came from
(config.toml's `[prices."MODEL"]`, else the genai-prices database; provider/prices.py)."""

from __future__ import annotations

from nanohermes import events as ev
from nanohermes.cost import cost_text, dollars
from nanohermes.provider.prices import Price
from nanohermes.ui.command_table import command


def _cached(cached: int | None, prompt: int) -> str:
    return f" ({100 * cached / prompt:.0f}% cached)" if cached is not None and prompt else ""


def spent_line(spent: ev.Usage | None) -> str:
    """`this session: 3 requests · 12,400 in (80% cached) · 1,020 out · $0.0021`."""
    if spent is None or not spent.requests:
        return "this session: no requests yet"
    if not spent.reported:
        return f"this session: {spent.requests} requests; the server reported no token usage, so no cost"
    written = f" · {spent.cache_write_tokens:,} written to the cache" if spent.cache_write_tokens else ""
    return (
        f"this session: {spent.requests} request{'s' if spent.requests != 1 else ''} · {spent.prompt_tokens:,} in"
        f"{_cached(spent.cached_tokens, spent.prompt_tokens)}{written} · {spent.completion_tokens:,} out · "
        f"{cost_text(spent)}"
    )


def last_line(last: dict) -> str | None:
    """`last request (gpt-4o-mini): 2,000 in (75% cached) · 50 out · $0.000195`."""
    if not last or last.get("prompt_tokens") is None:
        return None
    prompt = last["prompt_tokens"]
    cost = "unknown" if last.get("cost_usd") is None else dollars(last["cost_usd"])
    return (
        f"last request ({last.get('model', '?')}): {prompt:,} in{_cached(last.get('cached_tokens'), prompt)} · "
        f"{last.get('completion_tokens') or 0:,} out · {cost}"
    )


def price_line(model: str, price: Price | None) -> str:
    """The model's prices per million tokens and where they come from, or how to give one."""
    if price is None:
        return (
            f'{model}: no price known (not in the genai-prices database); set [prices."{model}"] '
            "input and output (dollars per million tokens) in config.toml to see dollars"
        )
    figures = [f"${price.input:g} input"]
    if price.cached_input is not None:
        figures.append(f"${price.cached_input:g} cached input")
    if price.cache_write is not None:
        figures.append(f"${price.cache_write:g} cache write")
    figures.append(f"${price.output:g} output")
    return f"{model}: {' · '.join(figures)} per million tokens ({price.source})"


@command("/cost", "/cost", "what this session has cost so far, the last request, and the model's prices")
def _cost(repl, arg: str) -> bool:
    from nanohermes.provider.prices import Prices

    config, status = repl.runtime.config, repl.runtime.agent.context_status()
    lines = [spent_line(status.spent), last_line(status.last_usage)]
    lines.append(price_line(config.model, Prices(config.prices).price(config.model)))
    repl.say("\n".join(line for line in lines if line))
    return True
