"""Each provider's usage shape, recorded in tests/recordings/usage/: read by its own small reader,
the same through the real openai client over real HTTP, and priced as genai-prices' own
calc_price prices the same counts (and as its own usage extractor reads the response, where it
has one for that shape)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nanohermes.config import Config
from nanohermes.provider import Provider
from nanohermes.provider.prices import Prices
from nanohermes.provider.usage_readers import (
    normalise_usage,
    read_anthropic,
    read_deepseek,
    read_openai,
    read_openrouter,
)
from tests.support.scripted_server import RawSSE

RECORDINGS = Path(__file__).parent.parent / "recordings" / "usage"
SHAPES = sorted(path.stem for path in RECORDINGS.glob("*.json"))
READERS = {
    "openai": read_openai,
    "deepseek": read_deepseek,
    "deepseek_documented": read_deepseek,
    "anthropic_gateway": read_anthropic,
    "litellm_anthropic": read_anthropic,
    "openrouter": read_openrouter,
}
# genai-prices' own usage extractors, by (provider id, api flavor), for the shapes it has one for;
# its deepseek extractor reads prompt_tokens_details, which DeepSeek's documented shape lacks.
EXTRACTORS = {
    "openai": ("openai", "chat"),
    "deepseek": ("deepseek", "chat"),
    "anthropic_gateway": ("anthropic", "default"),
    "openrouter": ("openrouter", "chat"),
}


def recording(name: str) -> dict:
    return json.loads((RECORDINGS / f"{name}.json").read_text())


def usage_of(recorded: dict) -> dict:
    (usage,) = [chunk["usage"] for chunk in recorded["chunks"] if chunk.get("usage")]
    return usage


def package_price(model: str, counts: dict, provider_id: str | None = None) -> float:
    """What genai-prices' calc_price makes of these counts (its input_tokens: every input token)."""
    from genai_prices import Usage, calc_price

    usage = Usage(
        input_tokens=counts["prompt_tokens"],
        cache_read_tokens=counts.get("cached_tokens") or 0,
        cache_write_tokens=counts.get("cache_write_tokens") or 0,
        output_tokens=counts["completion_tokens"],
    )
    return float(calc_price(usage, model, provider_id=provider_id).total_price)


def test_every_recorded_shape_has_a_reader():
    assert set(SHAPES) == set(READERS)


@pytest.mark.parametrize("shape", SHAPES)
def test_each_shape_is_read_by_its_own_reader_and_by_the_dispatch_alike(shape):
    recorded = recording(shape)
    usage = usage_of(recorded)
    assert READERS[shape](usage).as_dict() == recorded["expected"]
    assert normalise_usage(usage) == recorded["expected"]
    assert normalise_usage(normalise_usage(usage)) == recorded["expected"]  # our own shape reads back unchanged


@pytest.mark.parametrize("shape", SHAPES)
def test_each_recorded_stream_through_the_openai_client_over_http_gives_the_same_counts(shape, server, tmp_path):
    recorded = recording(shape)
    server.add(RawSSE(recorded["chunks"]))
    config = Config(model=recorded["model"], base_url=server.url, workspace=tmp_path, home=tmp_path)
    turn = Provider(config).stream_chat([{"role": "user", "content": "go"}], [], lambda text: None, max_tokens=256)
    assert (turn.content, turn.finish_reason) == ("Done.", "stop")
    assert turn.usage == recorded["expected"]


@pytest.mark.parametrize("shape", [s for s in SHAPES if s != "openrouter"])
def test_each_shapes_cost_is_what_genai_prices_calc_price_says_for_the_same_usage(shape):
    recorded = recording(shape)
    reading = normalise_usage(usage_of(recorded))
    ours = Prices().cost(recorded["model"], reading)
    assert ours == pytest.approx(package_price(recorded["model"], reading), rel=1e-12)


@pytest.mark.parametrize("shape", sorted(EXTRACTORS))
def test_genai_prices_own_extractor_reads_the_same_counts_from_the_recorded_response(shape):
    from genai_prices import extract_usage

    recorded = recording(shape)
    provider_id, flavor = EXTRACTORS[shape]
    response = {"model": recorded["model"], "usage": usage_of(recorded)}
    theirs = extract_usage(response, provider_id=provider_id, api_flavor=flavor).usage
    ours = recorded["expected"]
    assert theirs.input_tokens == ours["prompt_tokens"] and theirs.output_tokens == ours["completion_tokens"]
    assert theirs.cache_read_tokens == ours["cached_tokens"]
    assert (theirs.cache_write_tokens or 0) == ours.get("cache_write_tokens", 0)


def test_openais_cached_tokens_are_counted_once_inside_prompt_tokens():
    recorded = recording("openai")
    reading = normalise_usage(usage_of(recorded))
    assert reading["prompt_tokens"] == 12_480  # not 12,480 + 11,904
    once = Prices().cost("gpt-4o-mini", reading)
    twice = package_price("gpt-4o-mini", {**reading, "prompt_tokens": 12_480 + 11_904})
    assert once == pytest.approx(package_price("gpt-4o-mini", reading)) and twice > 1.5 * once


def test_deepseeks_hit_tokens_are_priced_at_the_hit_rate_not_billed_as_misses():
    """Read as OpenAI's shape, DeepSeek's documented usage shows no caching: every hit is billed as a miss."""
    reading = normalise_usage(usage_of(recording("deepseek_documented")))
    priced = Prices().cost("deepseek-chat", reading)
    as_openai = read_openai(usage_of(recording("deepseek_documented"))).as_dict()
    assert as_openai["cached_tokens"] is None and reading["cached_tokens"] == 12_416
    overstated = Prices().cost("deepseek-chat", as_openai)
    assert priced == pytest.approx(package_price("deepseek-chat", reading))
    assert overstated > 1.5 * priced  # the "billed 70 % too high" session, for this request higher still


def test_a_gateway_whose_hit_field_is_zero_beside_deepseeks_hit_count_reads_the_hit_count():
    usage = {"prompt_tokens": 8_000, "prompt_tokens_details": {"cached_tokens": 0}, "prompt_cache_hit_tokens": 7_808}
    assert normalise_usage(usage)["cached_tokens"] == 7_808
    assert normalise_usage({"prompt_cache_hit_tokens": 100, "prompt_cache_miss_tokens": 28})["prompt_tokens"] == 128


def test_openrouters_billed_dollars_are_the_cost_and_close_to_the_packages_figure():
    recorded = recording("openrouter")
    reading = normalise_usage(usage_of(recorded))
    assert Prices().cost(recorded["model"], reading) == 0.0111402
    assert reading["reported_cost_usd"] == pytest.approx(package_price(recorded["model"], reading, "openrouter"))


@pytest.mark.parametrize(
    ("usage", "prompt"),
    [
        # Anthropic's own reply: input_tokens excludes the cache's tokens
        (
            {"input_tokens": 2, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 5, "output_tokens": 7},
            107,
        ),
        # a gateway's prompt_tokens smaller than the cache's reads: it cannot have included them
        ({"prompt_tokens": 12, "completion_tokens": 7, "cache_read_input_tokens": 1_800}, 1_812),
        # a gateway whose total adds the cache's tokens again: Anthropic's input_tokens under OpenAI's name
        (
            {"prompt_tokens": 3_000, "completion_tokens": 10, "total_tokens": 4_810, "cache_read_input_tokens": 1_800},
            4_800,
        ),
        # LiteLLM: prompt_tokens included them (its total says so)
        (
            {"prompt_tokens": 3_000, "completion_tokens": 10, "total_tokens": 3_010, "cache_read_input_tokens": 1_800},
            3_000,
        ),
    ],
)
def test_anthropic_style_input_tokens_that_exclude_the_cached_ones_get_them_added(usage, prompt):
    assert normalise_usage(usage)["prompt_tokens"] == prompt


@pytest.mark.parametrize("garbage", ["12", -3, float("nan"), True, {"n": 1}, 10**12])
def test_a_garbage_count_in_any_shape_reads_as_unsaid(garbage):
    for usage in (
        {"prompt_tokens": 10, "completion_tokens": 1, "prompt_cache_hit_tokens": garbage},
        {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": garbage},
        {"prompt_tokens": 10, "completion_tokens": 1, "cost": garbage, "is_byok": False},
    ):
        reading = normalise_usage(usage)
        assert reading["prompt_tokens"] == 10 and reading["cached_tokens"] in (None, 0)
        assert "reported_cost_usd" not in reading
