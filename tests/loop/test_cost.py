"""Dollars per request and per session, through the real scripted server reporting usage with
cached tokens: the genai-prices database's prices for a model it knows, "unknown" for a local
server's own name, config.toml's [prices] over both, and -p's json."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import UTC, datetime

import pytest

from nanohermes.configure import load_config
from nanohermes.cost import dollars, miss_line
from nanohermes.errors import ConfigError
from nanohermes.provider.prices import Price, parse_prices_table
from nanohermes.runtime import build_runtime
from nanohermes.ui.commands import run_slash_command
from nanohermes.ui.usage_view import SessionTotals, turn_line
from tests.support.scripted_server import call, text
from tests.test_cli_sessions import ask
from tests.ui.test_commands import FakeRepl

FIRST = {"prompt_tokens": 12_000, "completion_tokens": 300, "prompt_tokens_details": {"cached_tokens": 0}}
SECOND = {"prompt_tokens": 12_500, "completion_tokens": 200, "prompt_tokens_details": {"cached_tokens": 11_904}}


def database_cost(model: str, usage: dict) -> float:
    """What genai-prices' own figures (dollars per million) make of `usage`, worked out here."""
    from genai_prices.data_snapshot import get_snapshot

    _, info = get_snapshot().find_provider_model(model, None, None, None)
    prices = info.get_prices(datetime.now(tz=UTC))
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    fresh = usage["prompt_tokens"] - cached
    total = (
        fresh * prices.input_mtok + cached * prices.cache_read_mtok + usage["completion_tokens"] * prices.output_mtok
    )
    return float(total) / 1_000_000


def session(server, workspace, monkeypatch, model: str, name: str = "money"):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    events: list = []
    runtime = build_runtime(
        load_config(base_url=server.url, workspace=workspace, model=model), name, events.append, None
    )
    repl = FakeRepl(runtime)
    repl.events, repl.totals = events, SessionTotals()
    return repl


def turn(repl, task: str) -> str:
    """One turn and the REPL's line after it, as ui/repl.py prints it."""
    result = repl.runtime.agent.run_turn(task)
    repl.totals.add(result.usage)
    return turn_line(result.usage, window=None, budget_share=None, seconds=1.0, totals=repl.totals)


def test_a_priced_models_session_costs_what_the_database_says_per_turn_and_in_total(server, workspace, monkeypatch):
    server.add(text("one", usage=FIRST), text("two", usage=SECOND))
    repl = session(server, workspace, monkeypatch, "gpt-4o-mini")
    first, second = database_cost("gpt-4o-mini", FIRST), database_cost("gpt-4o-mini", SECOND)
    assert (round(first, 6), round(second, 6)) == (0.00198, 0.001102)  # $0.15 / $0.075 cached / $0.60 a million
    line1 = turn(repl, "hello")
    line2 = turn(repl, "again")
    assert f"· {dollars(first)} ·" in line1 and line1.endswith(f"/ {dollars(first)}")
    assert line2 == (
        f"12,500 in · 200 out · 1 request · 95% cached · {dollars(second)} · 1.0s · "
        f"session 24,500 in / 500 out / {dollars(first + second)}"
    )
    run_slash_command(repl, "/cost")
    shown = repl.out[-1].splitlines()
    assert shown[0] == f"this session: 2 requests · 24,500 in (49% cached) · 500 out · {dollars(first + second)}"
    assert shown[1] == f"last request (gpt-4o-mini): 12,500 in (95% cached) · 200 out · {dollars(second)}"
    assert shown[2].startswith("gpt-4o-mini: $0.15 input · $0.075 cached input · $0.6 output per million tokens")
    assert "genai-prices" in shown[2]
    run_slash_command(repl, "/context")
    assert repl.out[-1].splitlines()[-1].startswith(f"session so far: {dollars(first + second)}")
    # the bundled prices only: the package's updater (the one part that fetches) never started
    from genai_prices.data_snapshot import get_snapshot

    assert not get_snapshot().from_auto_update
    assert not [t for t in threading.enumerate() if t.name.startswith("genai_prices")]
    repl.runtime.close()


def test_a_local_servers_own_model_name_has_an_unknown_cost_never_a_guess(server, workspace, monkeypatch):
    server.add(text("hi", usage=SECOND))
    repl = session(server, workspace, monkeypatch, "qwen2.5-coder-7b-q4")
    line = turn(repl, "hello")
    assert "cost unknown" in line and "$" not in line
    status = repl.runtime.agent.context_status()
    assert status.last_usage["cost_usd"] is None and status.spent.cost_usd is None
    run_slash_command(repl, "/cost")
    assert "· unknown" in repl.out[-1].splitlines()[0]
    assert 'no price known (not in the genai-prices database); set [prices."qwen2.5-coder-7b-q4"]' in repl.out[-1]
    repl.runtime.close()


def test_config_toml_prices_a_local_model_and_override_the_database(server, workspace, monkeypatch, isolated_home):
    (isolated_home / "config.toml").write_text(
        '[prices."my-local"]\ninput = 1.0\ncached_input = 0.25\noutput = 4\n'
        '[prices."gpt-4o-mini"]\ninput = 0\noutput = 0\n'
    )
    server.add(text("hi", usage=SECOND), text("free", usage=SECOND))
    repl = session(server, workspace, monkeypatch, "my-local")
    line = turn(repl, "hello")
    expected = (596 * 1.0 + 11_904 * 0.25 + 200 * 4) / 1_000_000  # $0.004372
    assert f"· {dollars(expected)} ·" in line and dollars(expected) == "$0.004372"
    repl.runtime.switch(model="gpt-4o-mini")
    assert "· $0.00 ·" in turn(repl, "again")  # the configured zero, not the database's figure
    run_slash_command(repl, "/cost")
    assert "gpt-4o-mini: $0 input · $0 output per million tokens (config.toml)" in repl.out[-1]
    repl.runtime.close()


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ({"m": {"input": 1}}, "needs output"),
        ({"m": {"input": 1, "output": -2}}, "from 0 to"),
        ({"m": {"input": 1, "output": 2, "cache_read": 1}}, "unknown key(s) cache_read"),
        ({"m": 3}, "must be a table"),
        (["m"], "must be a table of models"),
    ],
)
def test_a_bad_prices_table_is_a_clear_error(table, said):
    with pytest.raises(ConfigError, match=None) as raised:
        parse_prices_table(table, "config.toml")
    assert said in str(raised.value)


def test_a_price_charges_cached_and_written_tokens_at_their_own_rates_and_input_when_unset():
    price = Price(input=3, output=15, cached_input=0.3, cache_write=3.75)
    assert price.cost(10_000, 1_000, cached=6_000, written=2_000) == pytest.approx(
        (2_000 * 3 + 6_000 * 0.3 + 2_000 * 3.75 + 1_000 * 15) / 1e6
    )
    assert Price(input=2, output=8).cost(1_000, 100, cached=900) == pytest.approx((1_000 * 2 + 100 * 8) / 1e6)


def test_json_output_carries_the_runs_dollars(server, workspace):
    server.add(text("one", usage=FIRST))
    r = ask(server, workspace, "hi", "--output-format", "json", "--model", "gpt-4o-mini")
    assert r.returncode == 0, r.stderr
    usage = json.loads(r.stdout)["usage"]
    assert usage["cost_usd"] == pytest.approx(database_cost("gpt-4o-mini", FIRST))
    assert usage["unpriced"] == 0 and usage["cached_tokens"] == 0
    server.add(text("two", usage=SECOND))
    r = ask(server, workspace, "hi", "--output-format", "stream-json", "--model", "local-thing")
    events = [json.loads(line) for line in r.stdout.splitlines()]
    assert events[-2]["type"] == "usage" and events[-2]["cost_usd"] is None  # unknown: null, never 0


def test_the_miss_line_says_what_changed(server, workspace, monkeypatch):
    high = {"prompt_tokens": 4_000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 3_840}}
    low = {"prompt_tokens": 4_100, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 256}}
    server.add(text("a", usage=high), text("b", usage=low), text("c", usage=high), text("d", usage=low))
    repl = session(server, workspace, monkeypatch, "deepseek-chat")
    turn(repl, "one")
    turn(repl, "two")  # only appended, moments later: the provider dropped it
    misses = [e for e in repl.events if type(e).__name__ == "CacheMiss"]
    assert [miss_line(m) for m in misses] == [
        "cache miss: 6% cached (was 96%): the prefix was unchanged; the provider did not reuse its cache"
    ]
    turn(repl, "three")
    repl.runtime.switch(mode="plan")
    turn(repl, "four")
    misses = [e for e in repl.events if type(e).__name__ == "CacheMiss"]
    assert miss_line(misses[-1]) == (
        "cache miss: 6% cached (was 96%): the mode switched (ask → plan), which rewrites the system message"
    )
    repl.runtime.close()


def test_a_gateways_anthropic_id_is_priced_with_its_cache_writes(server, workspace, monkeypatch):
    details = {"cached_tokens": 6_000, "cache_write_tokens": 3_000}  # OpenRouter's shape
    server.add(text("hi", usage={"prompt_tokens": 10_000, "completion_tokens": 100, "prompt_tokens_details": details}))
    repl = session(server, workspace, monkeypatch, "anthropic/claude-sonnet-4")
    line = turn(repl, "hello")
    # $3 input, $0.30 cache read, $3.75 cache write, $15 output a million (the database's claude-sonnet-4)
    expected = (1_000 * 3 + 6_000 * 0.3 + 3_000 * 3.75 + 100 * 15) / 1_000_000
    assert f"· {dollars(expected)} ·" in line and dollars(expected) == "$0.01755"
    assert repl.runtime.agent.context_status().last_usage["cost_usd"] == pytest.approx(expected)
    repl.runtime.close()


def test_cache_writes_are_read_in_each_gateways_words():
    from nanohermes.provider.usage_readers import normalise_usage

    litellm = {"prompt_tokens": 900, "completion_tokens": 1, "cache_creation_input_tokens": 400}
    assert normalise_usage(litellm, None)["cache_write_tokens"] == 400
    too_many = {"prompt_tokens": 900, "prompt_tokens_details": {"cached_tokens": 800, "cache_write_tokens": 400}}
    assert normalise_usage(too_many, None)["cache_write_tokens"] == 100  # never more than the prompt holds
    assert "cache_write_tokens" not in normalise_usage({"prompt_tokens": 9, "completion_tokens": 1}, None)


def test_the_price_database_is_imported_by_a_priced_request_never_by_version_or_start_up(workspace):
    """Start-up's modules (the CLI, a session's runtime, the REPL's commands) leave it out."""
    code = (
        "import sys, nanohermes.cli, nanohermes.runtime, nanohermes.ui.commands; print('genai_prices' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=workspace, capture_output=True, text=True)
    assert out.stdout.split() == ["False"], out.stderr


def test_a_scripts_cache_miss_is_an_event_in_stream_json_and_a_line_on_stderr(server, workspace):
    def share(cached: int) -> dict:
        return {"prompt_tokens": 2_000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": cached}}

    (workspace / "a.txt").write_text("a\n")
    for output_format in ("stream-json", "text"):
        server.add(
            call("read_file", {"path": "a.txt"}, usage=share(0)),
            call("read_file", {"path": "a.txt", "offset": 1}, usage=share(1_900)),
            text("done", usage=share(100)),
        )
        r = ask(server, workspace, "read", "--output-format", output_format)
        assert r.returncode == 0, r.stderr
        if output_format == "stream-json":
            [miss] = [e for e in map(json.loads, r.stdout.splitlines()) if e["type"] == "cache_miss"]
            assert (miss["cause"], miss["share"], miss["previous_share"]) == ("unknown", 0.05, 0.95)
        else:
            assert "· cache miss: 5% cached (was 95%): the prefix was unchanged" in r.stderr
