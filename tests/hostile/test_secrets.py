"""Secrets that slipped (round two): the value of a secret is redacted once, at the edge, on every
path to the model (the system prompt's file names and guidance, memory, web pages after Markdown
escaping, MCP ${VAR}s), to disk (the session, memory.json, the crash log) and to a client (ACP
progress, stream-json deltas split anywhere)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from nanohermes.cli import app
from nanohermes.redact import Redactor, StreamGuard
from tests.support.acp_client import AcpHarness
from tests.support.cli import run_main_with
from tests.support.mcp_servers import demo_settings, toml_for
from tests.support.scripted_server import POLL, call, text

pytestmark = pytest.mark.subprocess

TOKEN = "ghp_live_0123456789abcdefXYZ"  # underscores: Markdown escapes them


def one_shot(server, workspace, *args, task="go"):
    r = CliRunner().invoke(app, ["-p", task, "--base-url", server.url, "-C", str(workspace), *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r


def everything_sent(server) -> str:
    return json.dumps(server.chat_requests(), ensure_ascii=False)


def everything_saved(home: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in home.rglob("*") if p.is_file())


@pytest.fixture
def secret_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000")
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)


class Page:
    """A local web server answering every path with one HTML page."""

    def __init__(self, html: str):
        body = html.encode()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, args=(POLL,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/setup"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def article(quoted: str) -> str:
    words = " ".join(f"word{i}" for i in range(60))
    return (
        "<html><body><article><h1>Setup</h1>"
        f"<p>Our CI uses the token {quoted} for *every* build; {words}.</p>"
        f"<p>Another paragraph so the page reads as an article: {words}.</p></article></body></html>"
    )


def fetch_page_in_a_run(server, workspace, html: str) -> str:
    """A -p run (--yes) whose model fetches one local page: the tool result the model got."""
    page = Page(html)
    try:
        server.add(call("web_fetch", {"url": page.url}), text("done"))
        one_shot(server, workspace, "--yes")
    finally:
        page.close()
    return next(m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool")


def test_a_secret_in_a_file_name_never_reaches_the_model(server, workspace, isolated_home, secret_env):
    (workspace / f"backup-{TOKEN}.txt").write_text("x")
    server.add(text("ok"))
    one_shot(server, workspace)
    system = server.chat_requests()[0]["messages"][0]["content"]
    assert "Workspace files" in system and "[redacted: GITHUB_TOKEN]" in system
    assert TOKEN not in everything_sent(server)


def test_project_guidance_quoting_a_secret_is_redacted_in_the_system_prompt(server, workspace, secret_env):
    (workspace / "AGENTS.md").write_text(f"Deploy with GITHUB_TOKEN={TOKEN} and run make.\n")
    server.add(text("ok"))
    one_shot(server, workspace)
    assert "GITHUB_TOKEN=[redacted: GITHUB_TOKEN]" in everything_sent(server)
    assert TOKEN not in everything_sent(server)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SECRET_KEY_BASE", "9f8e7d6c5b4a39281706"),
        ("DATABASE_URL", "postgres://app:hunter2pw@db.internal:5432/app"),
        ("DB_PASS", "correct-horse-battery"),
        ("OPENAI_API_KEY_2", "sk-second-0123456789"),
        ("DEPLOY_TOKEN_V2", "dtv2-abcdef0123"),
        ("SENTRY_URL", "https://user:sentrypass99@sentry.example.com/4"),
    ],
)
def test_values_named_like_keys_passwords_secrets_tokens_or_credential_urls_are_redacted(
    server, workspace, isolated_home, monkeypatch, name, value
):
    monkeypatch.setenv(name, value)
    (workspace / "notes.txt").write_text(f"the value is {value} here\n")
    server.add(call("read_file", {"path": "notes.txt"}), text("done"))
    one_shot(server, workspace, "--yes")
    results = [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert f"[redacted: {name}]" in results[0]
    assert value not in everything_sent(server) and value not in everything_saved(isolated_home)


def test_a_setting_naming_where_a_secret_lives_is_not_itself_redacted(server, workspace, monkeypatch):
    monkeypatch.setenv("SECRET_KEY_FILE", "/run/keys/app-key.pem")
    (workspace / "notes.txt").write_text("the key file is /run/keys/app-key.pem\n")
    server.add(call("read_file", {"path": "notes.txt"}), text("done"))
    one_shot(server, workspace, "--yes")
    assert "/run/keys/app-key.pem" in everything_sent(server)


def test_a_remembered_secret_is_refused_and_never_stored_or_sent(server, workspace, isolated_home, secret_env):
    server.add(
        call("remember", {"text": f"the CI token is {TOKEN}"}),
        call("remember", {"text": "the deploy pw is hunter2hunter2!"}),
        text("ok"),
        text("second"),
    )
    one_shot(server, workspace, "--yes", task="remember these")
    results = [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert "refused whole, not stored redacted" in results[0] and "GITHUB_TOKEN" in results[0]
    assert "looks like a password, key or token" in results[1]
    assert not (isolated_home / "memory.json").exists()
    one_shot(server, workspace, "--yes", task="what is the CI token and the deploy pw?")
    assert "<nanohermes-memory>" not in server.chat_requests()[-1]["messages"][-1]["content"]
    assert TOKEN not in everything_saved(isolated_home) and TOKEN not in everything_sent(server)


def test_a_memory_file_holding_a_secret_is_redacted_in_the_block_sent_and_saved(
    server, workspace, isolated_home, secret_env
):
    entry = {"id": "abc123", "kind": "fact", "text": f"the CI token is {TOKEN}", "created": "x", "updated": "x"}
    (isolated_home / "memory.json").write_text(json.dumps({"version": 1, "entries": [entry]}))
    server.add(text("ok"))
    one_shot(server, workspace, task="what is the CI token?")
    sent = server.chat_requests()[-1]["messages"][-1]["content"]
    assert "<nanohermes-memory>" in sent and "the CI token is [redacted: GITHUB_TOKEN]" in sent
    sessions = "".join(p.read_text() for p in (isolated_home / "sessions").rglob("*.jsonl"))
    assert TOKEN not in sessions and TOKEN not in everything_sent(server)


def test_a_secret_in_a_web_page_is_redacted_after_markdown_escaping(server, workspace, isolated_home, secret_env):
    result = fetch_page_in_a_run(server, workspace, article(TOKEN))
    assert "word59" in result and "[redacted: GITHUB_TOKEN]" in result  # the page was read and converted
    escaped = TOKEN.replace("_", "\\_")
    assert TOKEN not in everything_sent(server) and escaped not in everything_sent(server)
    assert escaped not in everything_saved(isolated_home)


def test_the_web_search_key_quoted_in_a_page_is_redacted(server, workspace, isolated_home, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000")
    key = "BSA_search_key_4242_abcd"
    (isolated_home / "config.toml").write_text(f'[web_search]\nbackend = "brave"\napi_key = "{key}"\n')
    assert "word59" in fetch_page_in_a_run(server, workspace, article(key))
    sent = everything_sent(server)
    assert "[redacted: web_search.api_key]" in sent
    assert key not in sent and key.replace("_", "\\_") not in sent


def test_mcp_variable_values_never_reach_the_model_or_the_session(server, workspace, isolated_home, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000")
    monkeypatch.setenv("DEPLOY_VALUE", "dv-0a1b2c3d4e5f")  # a name that says nothing: read by ${VAR}
    settings = demo_settings(trusted=True, env=(("SERVICE_CONFIG", "${DEPLOY_VALUE}"),))
    (isolated_home / "config.toml").write_text(toml_for(settings))
    server.add(call("mcp", {"name": "demo.environment", "arguments": {"name": "SERVICE_CONFIG"}}), text("done"))
    one_shot(server, workspace)
    results = [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert results == ["mcp demo.environment:\n[redacted: ${DEPLOY_VALUE}]"]
    assert "dv-0a1b2c3d4e5f" not in everything_saved(isolated_home)


def test_stream_json_never_emits_a_secret_split_across_text_deltas(server, workspace, secret_env):
    for size in (1, 3, 5):
        server.add(text(f"the token is {TOKEN}, keep it safe", chunk_size=size, delay=0.01))  # apart: one delta each
        r = one_shot(server, workspace, "--output-format", "stream-json")
        lines = [json.loads(line) for line in r.stdout.splitlines()]
        deltas = [e["text"] for e in lines if e.get("type") == "text_delta"]
        assert len(deltas) > 3  # it still streams
        assert "".join(deltas) == "the token is [redacted: GITHUB_TOKEN], keep it safe"
        assert TOKEN not in r.stdout and TOKEN[:12] not in r.stdout  # not even its head, at the end of a delta


def test_the_crash_log_never_holds_the_key_from_config_toml(workspace, isolated_home):
    key = "sk-config-only-0123456789"
    (isolated_home / "config.toml").write_text(f'api_key = "{key}"\n')
    bug = (
        f"import nanohermes.configure as c\ndef boom(*a, **k): raise ValueError('bad key {key}')\nc.load_config = boom"
    )
    r = run_main_with(bug, ["-p", "hi", "--base-url", "http://127.0.0.1:9/v1"], workspace)
    log = next((isolated_home / "logs").glob("crash-*.log")).read_text()
    assert r.returncode == 1 and "bad key [redacted: api_key]" in log and key not in log
    assert key not in r.stderr and "[redacted: api_key]" in r.stderr


def test_run_command_progress_sent_to_an_acp_client_is_redacted(server, workspace, tmp_path):
    server.add(
        call("run_command", {"command": 'printf "%s\\n" "$GITHUB_TOKEN"; sleep 1.5; echo done'}),
        text("finished"),
    )
    env = {
        "NANOHERMES_HOME": str(tmp_path / "home"),
        "OPENAI_API_KEY": "sk-test-key-000",
        "OPENAI_BASE_URL": server.url,
        "GITHUB_TOKEN": TOKEN,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "NO_COLOR": "1",
    }
    from acp import text_block

    agent = AcpHarness(env, workspace, tmp_path / "stderr.log")
    try:
        session = agent.run(agent.conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        agent.client.answer = "allow"
        agent.run(agent.conn.prompt(session_id=session, prompt=[text_block("show it")]))
        shown = repr(agent.client.updates[session])
    finally:
        agent.close()
    progress = [u for u in agent.client.of_kind(session, "tool_call_update") if u.status == "in_progress"]
    assert progress and "[redacted: GITHUB_TOKEN]" in shown and TOKEN not in shown


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=40), st.sampled_from([TOKEN, TOKEN.replace("_", "\\_")]))
def test_a_streamed_secret_is_never_let_out_whatever_the_split(cuts, form):
    redactor = Redactor.of([("GITHUB_TOKEN", TOKEN)])
    whole = f"see {form} and {form[:10]} then {form}{form}. ghp"
    pieces, start = [], 0
    for size in cuts:
        pieces.append(whole[start : start + size])
        start += size
    pieces.append(whole[start:])
    guard, shown = StreamGuard(redactor), ""
    for piece in pieces:
        shown += guard.feed(piece)
        assert TOKEN not in shown and TOKEN.replace("_", "\\_") not in shown
    assert shown + guard.flush() == redactor.text(whole)


def test_an_oauth_registrations_secret_never_reaches_the_model(server, workspace, isolated_home):
    """A command cannot read the state directory (hidden whole); a secret that still travels another
    way (pasted, a server echoing it) is redacted like a configured key."""
    oauth = isolated_home / "mcp" / "oauth"
    oauth.mkdir(parents=True)
    secret, token = "cs_0123456789abcdefSECRET", "at_0123456789abcdefTOKEN"
    (oauth / "docs.json").write_text(
        json.dumps({"client": {"client_secret": secret}, "tokens": {"access_token": token}})
    )
    (workspace / "pasted.txt").write_text(f"the secret is {secret} and {token}\n")
    server.add(call("read_file", {"path": "pasted.txt"}), text("ok"))
    one_shot(server, workspace, "--yes")
    sent = everything_sent(server)
    assert secret not in sent and token not in sent and "[redacted: client_secret]" in sent
