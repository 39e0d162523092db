"""The window learned from what the server says (provider/window.py): Ollama's and LM Studio's own
APIs answered by the scripted server on 127.0.0.1, asked by the real openai client."""

from __future__ import annotations

import pytest

from nanohermes.configure import load_config
from nanohermes.doctor import OK, WARN, run_checks
from nanohermes.provider import Provider
from nanohermes.provider.window import (
    OLLAMA_ASSUMED_CONTEXT,
    api_root,
    lmstudio_window,
    ollama_loaded_context,
    ollama_window,
)
from tests.support.agents import make_agent
from tests.support.local_servers import OllamaApi, lmstudio_routes
from tests.support.scripted_server import ScriptedServer, call, text

MODEL = "qwen2.5-coder:1.5b"


@pytest.fixture
def ollama():
    srv = ScriptedServer()
    api = OllamaApi(MODEL)
    srv.routes.update(api.routes())
    srv.api = api
    yield srv
    srv.close()


def learn(server, model=MODEL, **flags):
    return Provider(load_config(base_url=server.url, model=model, **flags)).learn_window()


def test_ollama_running_the_model_with_4096_of_its_32768_tokens_gives_4096(ollama):
    ollama.api.running = True
    learned = learn(ollama)
    assert (learned.tokens, learned.server, learned.trained) == (4096, "Ollama", 32768)
    assert learned.source == "Ollama's loaded model, GET /api/ps"
    assert "OLLAMA_CONTEXT_LENGTH=32768" in learned.fix and "PARAMETER num_ctx 32768" in learned.fix
    assert ollama.api.loads == 0  # running already: not loaded again
    assert [key for key, _ in ollama.native] == ["GET /v1/models", "GET /api/version", "POST /api/show", "GET /api/ps"]


def test_a_model_ollama_has_not_loaded_is_loaded_to_learn_its_context(ollama):
    ollama.api.num_ctx = 8192
    learned = learn(ollama)
    assert (learned.tokens, learned.source) == (8192, "Ollama's loaded model, GET /api/ps")
    assert ollama.api.loads == 1 and ("POST /api/generate", {"model": MODEL, "stream": False}) in ollama.native
    assert not ollama.chat_requests()  # no chat request spent on it


def test_an_ollama_that_says_no_context_uses_the_modelfile_then_its_smallest_default(ollama):
    ollama.api.reports_context = False  # before 0.9.7, /api/ps has no context_length
    ollama.api.num_ctx = 8192
    assert (learn(ollama).tokens, learn(ollama).source) == (8192, "num_ctx in the model's Modelfile, POST /api/show")
    ollama.api.num_ctx = None
    learned = learn(ollama)
    assert learned.tokens == OLLAMA_ASSUMED_CONTEXT and learned.source.startswith("assumed: Ollama's smallest default")


def test_a_model_trained_for_less_than_ollamas_context_gets_its_own_limit(ollama):
    ollama.api.trained, ollama.api.running, ollama.api.default_context = 2048, True, 2048
    learned = learn(ollama)
    assert (learned.tokens, learned.fix) == (2048, "")  # nothing more to give it


def test_lm_studio_says_the_loaded_context_else_the_models_maximum(server):
    server.routes.update(lmstudio_routes("qwen2.5-coder-7b-instruct", max_context=32768, loaded_context=8192))
    learned = learn(server, model="qwen2.5-coder-7b-instruct")
    assert (learned.tokens, learned.server, learned.source) == (
        8192,
        "LM Studio",
        "LM Studio's loaded model, GET /api/v0/models",
    )
    assert "--context-length 32768" in learned.fix
    server.routes.update(lmstudio_routes("qwen2.5-coder-7b-instruct", max_context=32768))
    assert learn(server, model="qwen2.5-coder-7b-instruct").tokens == 32768


def test_a_server_without_these_apis_says_nothing_and_no_script_is_spent(server):
    assert learn(server) is None
    assert server.requests == []  # the probes are GETs there: the chat script is untouched
    llama = ScriptedServer(n_ctx=8192)
    try:
        assert learn(llama).tokens == 8192 and learn(llama).source == "advertised by the server"
    finally:
        llama.close()


def test_nothing_reaches_ollama_asking_for_num_ctx_through_v1(ollama, workspace):
    # /v1/chat/completions has no field for it (Ollama drops `options` and `num_ctx` there):
    # the window is learned instead, and the fix is on the server's side
    ollama.api.running = True
    ollama.add(text("ok"))
    agent = make_agent(ollama, workspace, model=MODEL)
    agent.run_turn("hi")
    [request] = ollama.chat_requests()
    assert "options" not in request and "num_ctx" not in request
    assert agent.keeper.settings.window == 4096 and agent.keeper.settings.lean_tools


def test_the_agent_budgets_for_the_window_ollama_runs_the_model_with(ollama, workspace):
    ollama.api.num_ctx = 8192
    ollama.add(call("read_file", {"path": "a.py"}), text("done"))
    (workspace / "a.py").write_text("x = 1\n")
    agent = make_agent(ollama, workspace, model=MODEL)
    assert agent.run_turn("read a.py").final_text == "done"
    assert agent.keeper.settings.window == 8192
    assert all(r["max_tokens"] == 2048 for r in ollama.chat_requests())  # a quarter of 8,192


def test_doctor_says_plainly_that_ollama_cuts_silently_and_how_to_give_it_more(ollama):
    ollama.add(text("ok"), call("get_weather", {"city": "Paris"}))
    checks = {c.name: c for c in run_checks(load_config(base_url=ollama.url, model=MODEL))}
    window = checks["context window"]
    assert window.status == WARN and not window.essential
    assert window.detail.startswith("4,096 tokens (Ollama's loaded model, GET /api/ps; the model can take 32,768)")
    assert "cuts longer prompts silently" in window.fix and "cannot ask for a larger context" in window.fix
    assert "OLLAMA_CONTEXT_LENGTH=32768 ollama serve" in window.fix
    assert checks["model"].status == OK


def test_doctor_warns_when_the_configured_window_is_more_than_ollama_runs(ollama):
    ollama.api.running = True
    ollama.add(text("ok"), call("get_weather", {"city": "Paris"}))
    checks = {c.name: c for c in run_checks(load_config(base_url=ollama.url, model=MODEL, context_window=16384))}
    window = checks["context window"]
    assert window.status == WARN
    assert window.detail == (
        f"context_window = 16,384 is configured, but Ollama runs {MODEL!r} with 4,096 tokens "
        "(Ollama's loaded model, GET /api/ps) and cuts longer prompts"
    )


def test_doctor_reports_a_window_ollama_runs_in_full_as_fine(ollama):
    ollama.api.num_ctx = 32768
    ollama.add(text("ok"), call("get_weather", {"city": "Paris"}))
    window = {c.name: c for c in run_checks(load_config(base_url=ollama.url, model=MODEL))}["context window"]
    assert window.status == OK and window.detail.startswith("32,768 tokens (Ollama's loaded model, GET /api/ps)")


# ---------------------------------------------------------------- pure


def test_the_answers_are_read_as_the_servers_write_them():
    assert api_root("http://127.0.0.1:11434/v1/") == "http://127.0.0.1:11434"
    assert api_root("http://host:1234") == "http://host:1234"
    ps = {"models": [{"name": "qwen2.5-coder:latest", "model": "qwen2.5-coder:latest", "context_length": 8192}]}
    assert ollama_loaded_context(ps, "qwen2.5-coder") == 8192  # the tag Ollama adds
    assert ollama_loaded_context(ps, "llama3.2") is None
    assert ollama_loaded_context({"models": None}, "x") is None and ollama_loaded_context("oops", "x") is None
    odd = {"model_info": {"general.architecture": "qwen3moe", "qwen3moe.context_length": 262144}}
    assert ollama_window(odd, 65536).trained == 262144
    assert ollama_window({"model_info": "?"}, None).tokens == OLLAMA_ASSUMED_CONTEXT  # nothing usable: assumed
    assert ollama_window(None, 8192).fix == ""  # the model's limit unknown: nothing to suggest
    assert lmstudio_window({"error": "model not found"}) is None and lmstudio_window(None) is None
