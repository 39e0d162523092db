"""`nanohermes doctor` against the scripted server, a recording of llama.cpp, a dead port and a
server that rejects the key."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from nanohermes.cli import app
from nanohermes.configure import load_config
from nanohermes.doctor import FAIL, OK, SKIP, WARN, exit_code, run_checks
from tests.e2e.recording import RECORDINGS, advertised_n_ctx, load, replay_replies
from tests.support.scripted_server import POLL, Error, Reply, ScriptedServer, call, text, without_v1


def doctor(*args):
    """`nanohermes doctor ...` in this process (the whole CLI path, without a process start)."""
    result = CliRunner().invoke(app, ["doctor", *args])
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout, stderr=result.stderr)


def checks_for(url: str, **flags) -> dict:
    checks = run_checks(load_config(base_url=url, model=flags.pop("model", "local-model"), **flags))
    return {c.name: c for c in checks}


@pytest.fixture
def llama8k():
    srv = ScriptedServer(n_ctx=8192)
    yield srv
    srv.close()


def test_a_good_server_passes_every_check_one_line_each(llama8k):
    llama8k.add(text("ok"), call("get_weather", {"city": "Paris"}))
    r = doctor("--base-url", llama8k.url, "--model", "test-model")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"nanohermes doctor: model 'test-model' at {llama8k.url}"
    assert lines[-1] == "all essential checks passed"
    names = [
        "API key",
        "reachable",
        "key accepted",
        "model",
        "streaming",
        "tool calls",
        "usage",
        "context window",
        "token counting",
        *["sandbox"]
        * 6,  # what is enforced, then a write outside, a connect, a hidden read, a Unix socket, the temp dir
    ]
    assert [line.split(":")[0] for line in lines[1:-1]] == [f"{OK} {name}" for name in names]
    assert (
        "8,192 tokens (advertised by the server): compacts past 5,529 tokens down to 1,658, tool results ≤ 3,686 bytes, max_tokens 2,048"
        in r.stdout
    )
    probe, tool_probe = llama8k.chat_requests()
    assert probe["stream"] and probe["max_tokens"] > 0 and probe["stream_options"] == {"include_usage": True}
    assert [t["function"]["name"] for t in tool_probe["tools"]] == ["get_weather"]


@pytest.mark.skipif(not (RECORDINGS / "doctor.json").exists(), reason="no recording of doctor against llama.cpp")
def test_doctor_passes_against_the_recorded_llama_cpp_server(tmp_path):
    recording = load("doctor")
    srv = ScriptedServer(n_ctx=advertised_n_ctx(recording))
    try:
        srv.add(*replay_replies(recording, tmp_path, tmp_path))
        checks = checks_for(srv.url, model="test-model")  # the name the scripted server lists
    finally:
        srv.close()
    assert all(c.status == OK for c in checks.values()), [c.line() for c in checks.values()]
    assert "get_weather" in checks["tool calls"].detail


def test_a_server_without_usage_warns_but_passes(llama8k):
    llama8k.add(Reply(content="ok", usage=None), Reply(tool_calls=[("get_weather", '{"city": "Paris"}')], usage=None))
    checks = checks_for(llama8k.url)
    assert checks["usage"].status == WARN and "estimates tokens" in checks["usage"].detail
    assert checks["usage"].fix and "include_usage" in checks["usage"].fix
    assert exit_code(list(checks.values())) == 0


def test_a_dead_server_fails_reachability_with_the_fix_and_skips_the_rest():
    r = doctor("--base-url", "http://127.0.0.1:9/v1")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"{FAIL} reachable: cannot reach http://127.0.0.1:9/v1" in r.stdout and "fix: start the server" in r.stdout
    assert f"{SKIP} streaming: skipped" in r.stdout
    assert f"{OK} token counting" in r.stdout  # offline checks still run
    assert r.stdout.splitlines()[-1] == "1 essential check(s) failed: reachable"


class _RejectKey(BaseHTTPRequestHandler):
    def _reject(self):
        body = json.dumps(
            {
                "error": {
                    "message": "Incorrect API key provided",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            }
        ).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _reject

    def log_message(self, *args):
        pass


def test_a_rejected_key_fails_with_where_to_set_it(monkeypatch):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _RejectKey)
    threading.Thread(target=httpd.serve_forever, args=(POLL,), daemon=True).start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
        checks = checks_for(f"http://127.0.0.1:{httpd.server_address[1]}/v1")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert checks["reachable"].status == OK
    assert checks["key accepted"].status == FAIL and "HTTP 401" in checks["key accepted"].detail
    assert "OPENAI_API_KEY" in checks["key accepted"].fix
    assert exit_code(list(checks.values())) == 1


def test_tool_calls_written_as_text_fail_with_the_server_flag_to_fix_it(llama8k):
    llama8k.add(text("ok"), text('```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```'))
    checks = checks_for(llama8k.url)
    assert checks["tool calls"].status == FAIL and "--jinja" in checks["tool calls"].fix
    assert exit_code(list(checks.values())) == 1


def test_an_unknown_model_fails_and_lists_what_the_server_has(llama8k):
    llama8k.add(Error(404, {"error": {"message": "model 'nosuch' not found", "type": "not_found_error"}}))
    checks = checks_for(llama8k.url, model="nosuch")
    assert (
        checks["model"].status == FAIL and "test-model" in checks["model"].detail and "--model" in checks["model"].fix
    )
    assert checks["streaming"].status == SKIP


def test_a_missing_key_for_the_default_endpoint_is_the_first_failure():
    r = doctor()
    assert r.returncode == 1
    assert r.stdout.splitlines()[1].startswith(f"{FAIL} API key: missing") and "OPENAI_API_KEY" in r.stdout


def test_the_configured_window_is_reported_without_asking_the_server(server, isolated_home):
    (isolated_home / "config.toml").write_text("context_window = 4096\n")
    server.add(text("ok"), call("get_weather", {"city": "Paris"}))
    checks = checks_for(server.url)
    assert checks["context window"].status == OK and "4,096 tokens (configured)" in checks["context window"].detail


def test_a_json_404_without_v1_fails_reachable_with_add_v1_and_blames_no_model(server):
    base = without_v1(server)
    checks = checks_for(base)
    assert checks["reachable"].status == FAIL and f"the API is at {base}/v1" in checks["reachable"].detail
    assert checks["reachable"].fix == f"add /v1: --base-url {base}/v1 (or OPENAI_BASE_URL)"
    assert checks["model"].status == SKIP and server.chat_requests() == []


def test_a_public_models_listing_leaves_the_key_to_the_chat_request_which_refuses_it(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")  # GET /models answers anyone, as OpenRouter's does
    server.add(Error(401, {"error": {"message": "No auth credentials found", "code": 401}}))
    r = doctor("--base-url", server.url, "--model", "test-model")
    assert r.returncode == 1 and f"{OK} key accepted" not in r.stdout
    assert f"{FAIL} key accepted: the chat request was refused (HTTP 401)" in r.stdout and "OPENAI_API_KEY" in r.stdout
    assert f"{SKIP} model" in r.stdout


def test_a_public_models_listing_and_a_chat_request_taken_prove_the_key(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-right")
    server.add(text("ok"), call("get_weather", {"city": "Paris"}))
    checks = checks_for(server.url, model="test-model")
    assert (checks["key accepted"].status, checks["key accepted"].detail) == (OK, "a chat request with it was accepted")
