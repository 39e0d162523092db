"""What a request cost in dollars: the model's prices from config.toml's `[prices."MODEL"]`, else
from the `genai-prices` database (pydantic's, maintained with the providers' price pages), looked
up by the model id whatever the base URL (a localhost URL is often a gateway such as LiteLLM to a
priced model). A gateway that says what it billed (OpenRouter's `cost`) is taken at its word,
after config.toml's figures. A model neither knows (a local server's own name) has no price: its cost is
unknown (None), never a guess.

`genai_prices` costs ~150 ms to import, so it is imported on the first priced request, never at
start-up. Its prices are the ones bundled with the installed package: NanoHermes never starts its
`UpdatePrices` (the one part that fetches from the network), so nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from nanohermes.errors import ConfigError

PER_MILLION = 1_000_000
# [prices."MODEL"] keys, dollars per million tokens: the four figures every provider's page gives.
PRICE_KEYS = frozenset({"input", "cached_input", "cache_write", "output"})
MAX_PRICE = 10_000.0  # dollars per million tokens: far above any model's; a bigger figure is a typo


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens. `cached_input` / `cache_write` None: charged as input."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None
    source: str = "config.toml"

    def cost(self, prompt: int, completion: int, cached: int = 0, written: int = 0) -> float:
        """`prompt` counts every input token, the cached and written ones among them (as OpenAI reports)."""
        cached_rate = self.input if self.cached_input is None else self.cached_input
        write_rate = self.input if self.cache_write is None else self.cache_write
        fresh = max(0, prompt - cached - written)
        total = fresh * self.input + cached * cached_rate + written * write_rate + completion * self.output
        return total / PER_MILLION


def parse_prices_table(table, path) -> dict[str, Price]:
    """`[prices."gpt-4o-mini"] input = 0.15, cached_input = 0.075, output = 0.6` → {model: Price}."""
    where = f"{path} [prices]"
    if not isinstance(table, dict):
        raise ConfigError(f'{where} must be a table of models, e.g. [prices."my-model"] input = 0.5, output = 1.5.')
    prices = {}
    for model, entry in table.items():
        if not isinstance(entry, dict):
            raise ConfigError(f'{where}: "{model}" must be a table with input and output (dollars per million tokens).')
        unknown = sorted(set(entry) - PRICE_KEYS)
        if unknown:
            raise ConfigError(
                f'{where}."{model}" has unknown key(s) {", ".join(unknown)}; known: {", ".join(sorted(PRICE_KEYS))}.'
            )
        missing = sorted({"input", "output"} - set(entry))
        if missing:
            raise ConfigError(f'{where}."{model}" needs {" and ".join(missing)} (dollars per million tokens).')
        figures = {key: _dollars(entry[key], f'{where}."{model}".{key}') for key in entry}
        prices[model] = Price(**figures)
    return prices


def _dollars(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_PRICE:
        raise ConfigError(f"{where} must be dollars per million tokens, from 0 to {MAX_PRICE:g}; got {value!r}.")
    return float(value)


class Prices:
    """Prices by model id: the configured ones first, then the database's, each looked up once."""

    def __init__(self, configured: dict[str, Price] | None = None):
        self.configured = dict(configured or {})
        self._found: dict[str, object] = {}  # model → (provider, ModelInfo) of the database, or None
        self._warming: set[str] = set()

    def warm(self, model: str) -> None:
        """Look `model` up on a thread while its first request streams: importing the database
        takes ~150 ms (more on a busy machine), which the reply's line would otherwise wait for."""
        if model in self.configured or model in self._found or model in self._warming:
            return
        import threading

        self._warming.add(model)
        threading.Thread(target=self._lookup, args=(model,), name="nanohermes-prices", daemon=True).start()

    def cost(self, model: str, usage: dict | None) -> float | None:
        """Dollars for one request's reported usage, or None: no usage, or no price for `model`.
        config.toml's price first (the user said), then the dollars the gateway billed, then the database."""
        if not usage or usage.get("prompt_tokens") is None:
            return None
        prompt, completion = usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0
        cached, written = usage.get("cached_tokens") or 0, usage.get("cache_write_tokens") or 0
        if model in self.configured:
            return self.configured[model].cost(prompt, completion, cached, written)
        if usage.get("reported_cost_usd") is not None:  # what the gateway billed (OpenRouter's `cost`)
            return usage["reported_cost_usd"]
        found = self._lookup(model)
        if found is None:
            return None
        from genai_prices import Usage

        provider, info = found
        tokens = Usage(
            input_tokens=prompt, cache_read_tokens=cached, cache_write_tokens=written, output_tokens=completion
        )
        try:
            return float(info.calc_price(tokens, provider).total_price)
        except (ValueError, ArithmeticError):  # counts the database cannot price (a write above the input)
            return None

    def price(self, model: str) -> Price | None:
        """The model's prices now (for /cost), or None when neither config.toml nor the database has them."""
        if model in self.configured:
            return self.configured[model]
        found = self._lookup(model)
        if found is None:
            return None
        import genai_prices

        prices = found[1].get_prices(datetime.now(tz=UTC))
        figure = lambda name: _base(getattr(prices, name, None))  # noqa: E731
        return Price(
            input=figure("input_mtok") or 0.0,
            output=figure("output_mtok") or 0.0,
            cached_input=figure("cache_read_mtok"),
            cache_write=figure("cache_write_mtok"),
            source=f"genai-prices {genai_prices.__version__}",
        )

    def _lookup(self, model: str):
        if model not in self._found:
            self._found[model] = database_entry(model)
        return self._found[model]


def _base(figure) -> float | None:
    """A figure per million tokens; for tiered prices the first tier's (what /cost shows)."""
    if figure is None:
        return None
    return float(getattr(figure, "base", figure))


def database_entry(model: str):
    """(provider, ModelInfo) of `model` in genai-prices, or None. The id as given (its provider
    found by the model's name: `gpt-4o-mini`, `claude-sonnet-4-5`), else as a gateway names it,
    `provider/model` (`anthropic/claude-sonnet-4`: LiteLLM and OpenRouter ids). Never by the base
    URL: a local gateway serves priced models, and a local server's own name stays unknown."""
    try:
        from genai_prices import data_snapshot
    except ImportError:  # installed without it: every price unknown, as for a model it does not list
        return None
    snapshot = data_snapshot.get_snapshot()
    attempts = [(model, None)] + ([(model, "litellm")] if "/" in model else [])
    for ref, provider_id in attempts:
        try:
            return snapshot.find_provider_model(ref, None, provider_id, None)
        except LookupError:
            continue
    return None
