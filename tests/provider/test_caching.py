"""Every provider's prompt cache switched on, through the real scripted server: OpenAI-family
models get one `prompt_cache_key` per session, Anthropic-family ids (direct or through a
gateway) get cache breakpoints, others are sent as before; config.toml overrides either way.
And the miss watch's causes, on plain data."""

from __future__ import annotations

import pytest

from nanohermes import events as ev
from nanohermes.configure import load_config
from nanohermes.context.cache import MESSAGES, TOOLS
from nanohermes.loop.misses import CACHE_TTL_S, MissWatch, Request
from nanohermes.provider.caching import is_anthropic_family, is_openai_family
from nanohermes.runtime import build_runtime
from tests.support.agents import make_agent
from tests.support.scripted_server import call, text


def _run(server, workspace, monkeypatch, name: str, turns: int = 1, **settings) -> list[dict]:
    """The chat requests one runtime (one session) sent over `turns` turns."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    before = len(server.chat_requests())
    runtime = build_runtime(
        load_config(base_url=server.url, workspace=workspace, **settings), name, lambda e: None, None
    )
    for i in range(turns):
        server.add(call("read_file", {"path": "."}), text(f"done {i}"))
        runtime.agent.run_turn(f"task {i}")
    runtime.close()
    return server.chat_requests()[before:]


def test_an_openai_models_requests_carry_one_cache_key_per_session_kept_on_resume(server, workspace, monkeypatch):
    first = _run(server, workspace, monkeypatch, "alpha", turns=2, model="gpt-4o-mini")
    keys = {r.get("prompt_cache_key") for r in first}
    assert len(first) == 4 and len(keys) == 1 and next(iter(keys)).startswith("nanohermes-")
    assert "alpha" not in next(iter(keys))  # a hash: the session's name stays here
    other = _run(server, workspace, monkeypatch, "beta", model="gpt-4o-mini")
    assert {r["prompt_cache_key"] for r in other} != keys
    resumed = _run(server, workspace, monkeypatch, "alpha", model="gpt-4o-mini")
    assert {r["prompt_cache_key"] for r in resumed} == keys


def test_other_models_get_no_cache_key_unless_config_asks(server, workspace, monkeypatch):
    for model in ("deepseek-chat", "qwen2.5-coder", "gpt-oss-20b", "claude-sonnet-4-5"):
        assert all("prompt_cache_key" not in r for r in _run(server, workspace, monkeypatch, model, model=model))
    forced = _run(server, workspace, monkeypatch, "forced", model="my-gateway-model", prompt_cache_key=True)
    assert all(r["prompt_cache_key"].startswith("nanohermes-") for r in forced)
    off = _run(server, workspace, monkeypatch, "off", model="gpt-4.1", prompt_cache_key=False)
    assert all("prompt_cache_key" not in r for r in off)


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "anthropic/claude-3.5-sonnet", "openrouter/anthropic/claude-x"])
def test_anthropic_family_ids_get_cache_breakpoints_by_default(server, workspace, model):
    server.add(call("echo", {"text": "a"}), text("done"))
    make_agent(server, workspace, model=model).run_turn("go")
    sent = server.chat_requests()[-1]["messages"]
    assert sent[0]["content"] == [{"type": "text", "text": "SYSTEM", "cache_control": {"type": "ephemeral"}}]
    assert sent[-1]["content"][0]["cache_control"] == {"type": "ephemeral"}


def test_the_setting_overrides_the_family_and_others_stay_plain_strings(server, workspace):
    server.add(text("a"), text("b"))
    make_agent(server, workspace, model="claude-sonnet-4-5", cache_breakpoints=False).run_turn("go")
    make_agent(server, workspace, model="deepseek-chat").run_turn("go")
    for request in server.chat_requests():
        assert all(isinstance(m["content"], str) for m in request["messages"])


def test_families_are_read_from_the_model_id():
    assert all(map(is_anthropic_family, ["claude-opus-4-1", "anthropic/claude-sonnet-4", "anthropic.claude-v2:1"]))
    assert not any(map(is_anthropic_family, ["claudette-7b", "qwen-claude-distill", "gpt-4o"]))
    assert all(map(is_openai_family, ["gpt-4o-mini", "o3", "o4-mini", "openai/gpt-5", "chatgpt-4o-latest"]))
    assert not any(map(is_openai_family, ["gpt-oss-20b", "o1x", "deepseek-chat", "llama-3-8b", "oss/gpt-4"]))


def _request(cached: int, *, changed=None, model="m", mode="ask", summary=False, started=0.0) -> Request:
    usage = {"prompt_tokens": 1_000, "completion_tokens": 5, "cached_tokens": cached}
    return Request(model, mode, summary, usage, changed, started)


def test_the_miss_watch_names_the_first_change_or_the_idle_minutes():
    now = [0.0]
    watch = MissWatch(clock=lambda: now[0])
    assert watch.see(_request(0)) is None  # nothing cached before: nothing lost
    assert watch.see(_request(900)) is None
    assert watch.see(_request(850)) is None  # a few points: block granularity, not a miss
    now[0] = 10.0 + CACHE_TTL_S + 7 * 60
    miss = watch.see(_request(100, started=now[0]))
    assert (miss.cause, miss.idle_minutes, round(miss.previous_share, 2)) == (ev.MissCause.IDLE, 12, 0.85)
    watch.see(_request(900, started=now[0]))
    assert watch.see(_request(0, changed=TOOLS, started=now[0])).cause == ev.MissCause.TOOLS
    watch.see(_request(900, started=now[0]))
    assert watch.see(_request(900, summary=True, model="small")) is None  # a summary request is not judged
    assert watch.see(_request(10, changed=TOOLS, started=now[0])).cause == ev.MissCause.COMPACTION
    watch.see(_request(900, started=now[0]))
    assert watch.see(_request(10, changed=MESSAGES, started=now[0])).cause == ev.MissCause.COMPACTION
    watch.see(_request(900, started=now[0]))
    miss = watch.see(_request(10, model="other", started=now[0]))
    assert (miss.cause, miss.before, miss.after) == (ev.MissCause.MODEL, "m", "other")
