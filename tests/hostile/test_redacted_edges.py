"""Issue 44, item 4: a provider's HTTP 400 that echoed the API key and a GITHUB_TOKEN value printed
both on stderr (CI logs publish it) and in `--output-format json`; the UserPromptSubmit hook's stdin
carried the user's secret while the model got it redacted. Through the real CLI and the scripted
server over HTTP, with a real hook process."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run_cli
from tests.support.hook_scripts import hooks_toml, logged, write_scripts
from tests.support.scripted_server import Error, text

pytestmark = pytest.mark.subprocess

API_KEY = "sk-live-0123456789abcdefABCDEF"
TOKEN = "ghp_live_0123456789abcdefXYZ"
ECHO = f"Incorrect API key provided: {API_KEY}. Also rejected: Authorization token {TOKEN} " + "pad " * 80


@pytest.fixture
def secrets_env():
    return {"OPENAI_API_KEY": API_KEY, "GITHUB_TOKEN": TOKEN}


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_a_provider_error_that_echoes_secrets_is_printed_redacted(server, workspace, secrets_env, output_format):
    server.add(Error(400, {"error": {"message": ECHO, "type": "invalid_request_error"}}))
    r = run_cli(["-p", "hi", "--base-url", server.url, "--output-format", output_format], workspace, secrets_env)
    assert r.returncode == 1
    for shown in (r.stderr, r.stdout):
        assert API_KEY not in shown and TOKEN not in shown
        assert "sk-live-0123" not in shown and "ghp_live" not in shown  # not even a part of either
    assert "key provided: [redacted: api_key]" in r.stderr and "token [redacted: GITHUB_TOKEN]" in r.stderr
    if output_format == "json":
        assert "[redacted: api_key]" in json.loads(r.stdout.splitlines()[-1])["message"]


def test_a_retried_server_error_that_echoes_the_key_is_said_redacted(server, workspace, secrets_env):
    server.add(Error(500, {"error": {"message": f"upstream refused key {API_KEY}"}}), text("fine"))
    r = run_cli(["-p", "hi", "--base-url", server.url], workspace, secrets_env)
    assert r.returncode == 0 and "fine" in r.stdout, r.stderr
    assert "retry 1/" in r.stderr and API_KEY not in r.stderr


def test_the_user_prompt_submit_hook_reads_the_prompt_redacted_as_the_model_does(
    server, tmp_path, workspace, isolated_home, secrets_env
):
    scripts, log = write_scripts(tmp_path / "scripts"), tmp_path / "hooks.log"
    (isolated_home / "config.toml").write_text(
        hooks_toml([("UserPromptSubmit", f"{scripts['logger.py']} {log}", None)])
    )
    server.add(text("ok"))
    r = run_cli(["-p", f"deploy with token {TOKEN} please", "--base-url", server.url], workspace, secrets_env)
    assert r.returncode == 0, r.stderr
    [payload] = logged(log)
    assert payload["prompt"] == "deploy with token [redacted: GITHUB_TOKEN] please"
    assert TOKEN not in json.dumps(server.chat_requests())
