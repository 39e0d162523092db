"""A session against a server that reports DeepSeek's (or an Anthropic gateway's) usage shape, over
real HTTP: the REPL's line shows the cached share, the dollars are genai-prices' own figure for
the same counts, a fallen hit count is a cache-miss note, and requests without a price are counted."""

from __future__ import annotations

import json

import pytest

from nanohermes.cost import dollars, miss_line
from tests.loop.test_cost import session, turn
from tests.provider.test_usage_readers import package_price, recording, usage_of
from tests.support.scripted_server import text
from tests.test_cli_sessions import ask


def deepseek(hit: int, miss: int, completion: int = 20) -> dict:
    """DeepSeek's documented usage object: no prompt_tokens_details at all."""
    prompt = hit + miss
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "prompt_cache_hit_tokens": hit,
        "prompt_cache_miss_tokens": miss,
    }


def test_a_deepseek_session_shows_its_caching_and_costs_what_genai_prices_says(server, workspace, monkeypatch):
    first, second = deepseek(0, 6_400), deepseek(6_336, 128)
    server.add(text("one", usage=first), text("two", usage=second))
    repl = session(server, workspace, monkeypatch, "deepseek-chat")
    turn(repl, "hello")
    line = turn(repl, "again")
    reading = {"prompt_tokens": 6_464, "completion_tokens": 20, "cached_tokens": 6_336}
    expected = package_price("deepseek-chat", reading)
    assert "6,464 in · 20 out · 1 request · 98% cached" in line and f"· {dollars(expected)} ·" in line
    assert repl.runtime.agent.context_status().last_usage["cost_usd"] == pytest.approx(expected)
    repl.runtime.close()


def test_a_deepseek_hit_count_that_falls_is_a_cache_miss_note(server, workspace, monkeypatch):
    server.add(
        text("a", usage=deepseek(0, 4_000)),
        text("b", usage=deepseek(3_968, 100)),
        text("c", usage=deepseek(128, 4_100)),
    )
    repl = session(server, workspace, monkeypatch, "deepseek-chat")
    for task in ("one", "two", "three"):
        turn(repl, task)
    misses = [e for e in repl.events if type(e).__name__ == "CacheMiss"]
    assert [miss_line(m) for m in misses] == [
        "cache miss: 3% cached (was 98%): the prefix was unchanged; the provider did not reuse its cache"
    ]
    repl.runtime.close()


def test_an_anthropic_gateways_session_counts_the_cached_tokens_inside_the_prompt(server, workspace, monkeypatch):
    recorded = recording("anthropic_gateway")
    server.add(text("hi", usage=usage_of(recorded)))
    repl = session(server, workspace, monkeypatch, recorded["model"])
    line = turn(repl, "hello")
    expected = package_price(recorded["model"], recorded["expected"])
    assert "12,480 in · 214 out · 1 request · 90% cached" in line and f"· {dollars(expected)} ·" in line
    repl.runtime.close()


def test_requests_without_a_price_are_counted_as_unpriced(server, workspace, monkeypatch):
    server.add(text("a", usage=deepseek(0, 100)), text("b", usage=deepseek(0, 100)))
    repl = session(server, workspace, monkeypatch, "my-local-model")
    turn(repl, "one")
    result = repl.runtime.agent.run_turn("two")
    assert result.usage.cost_usd is None and result.usage.unpriced == 1
    assert repl.runtime.agent.context_status().spent.unpriced == 2
    repl.runtime.close()
    server.add(text("c", usage=deepseek(0, 100)))
    r = ask(server, workspace, "hi", "--output-format", "json", "--model", "my-local-model")
    usage = json.loads(r.stdout)["usage"]
    assert usage["cost_usd"] is None and usage["unpriced"] == 1
