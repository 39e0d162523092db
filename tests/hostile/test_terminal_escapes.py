"""Raw escape sequences (round two): the terminal shows control characters as symbols, never
runs them, from session titles and workspace paths in `nanohermes sessions`, a served model's
name in `doctor`, the `-p` resume recap, a helper's description and arguments and a summary's
memories in `-p` progress, and a provider's error; an MCP schema's text reaches the model
escaped in the error of a call that did not fit."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from nanohermes.cli import app
from nanohermes.loop.subagents import HELPER_BRIEF
from nanohermes.ui.escape import neutralize
from tests.support.mcp_servers import demo_settings, toml_for
from tests.support.memories import compacting_model
from tests.support.scripted_server import Error, call, serving, text

pytestmark = pytest.mark.subprocess

TITLE = "\x1b]0;owned\x07\x1b[2J"  # retitles the window, clears the screen
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def invoke(*args, env=None):
    r = CliRunner().invoke(app, list(args), env=env)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r


def one_shot(server, workspace, *args, task="go"):
    return invoke("-p", task, "--base-url", server.url, "-C", str(workspace), *args)


def raw_controls(text: str) -> list[str]:
    return [c for c in RAW if c in text]


def test_sessions_lists_titles_and_workspace_paths_with_their_controls_shown(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    workspace = tmp_path / f"proj{TITLE}"
    workspace.mkdir()
    server.add(text("ok"))
    one_shot(server, workspace, task=f"fix {TITLE} please")
    listing = invoke("sessions", "--all").stdout
    assert raw_controls(listing) == [] and listing.count(neutralize("\x1b")) >= 2  # title and workspace
    here = invoke("sessions", "-C", str(workspace)).stdout  # its rows and the line naming the workspace
    assert "1 session(s) in" in here and raw_controls(here) == []


def test_doctor_shows_a_served_models_name_without_running_its_escapes(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    serving(server, ["good-model", f"evil{TITLE}model"])
    r = invoke("doctor", "--model", "missing-model", "--base-url", server.url)
    assert "evil" in r.stdout and raw_controls(r.stdout + r.stderr) == []


def test_the_p_resume_recap_shows_control_characters(server, workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.add(text(f"done {TITLE} done"), text("again"))
    one_shot(server, workspace, "--session", "esc", task=f"first {TITLE} request")
    r = one_shot(server, workspace, "--session", "esc", task="second")
    assert "first" in r.stderr and raw_controls(r.stderr) == []  # the recap names the earlier request


def test_a_helpers_description_and_arguments_in_p_progress_show_their_controls(server, workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (workspace / "a.txt").write_text("x\n")
    helper = [call("read_file", {"path": f"a{TITLE}.txt"}), text("helper answer")]
    parent = [call("task", {"description": f"look {TITLE}", "prompt": "read a"}), text("done")]

    def handler(body):
        asked_by_helper = any(HELPER_BRIEF in (m.get("content") or "") for m in body["messages"] if m["role"] == "user")
        return (helper if asked_by_helper else parent).pop(0)

    server.handler = handler
    r = one_shot(server, workspace, "--yes")
    assert "look" in r.stderr and "┆" in r.stderr and raw_controls(r.stderr) == []


def test_a_summarys_memories_in_p_progress_show_their_controls(server, workspace, isolated_home, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    compacting_model(server, workspace, isolated_home, f"fact: The build {TITLE} uses make.")
    r = one_shot(server, workspace, "--yes", task="review the modules")
    assert "uses make" in r.stderr and raw_controls(r.stderr) == []


def test_a_providers_error_text_is_shown_without_running_its_escapes(server, workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server.add(Error(400, {"error": {"message": f"bad request {TITLE}\x9b31m red", "type": "invalid_request_error"}}))
    r = one_shot(server, workspace)
    assert r.exit_code == 1 and "bad request" in r.stderr and raw_controls(r.stderr) == []


def test_an_mcp_schemas_text_reaches_the_model_escaped_in_an_error(server, workspace, isolated_home, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    settings = demo_settings("trap", "--schema-trap", trusted=True)
    (isolated_home / "config.toml").write_text(toml_for(settings))
    server.add(call("mcp", {"name": "trap.configure", "arguments": {"options": "not an object"}}), text("ok"))
    one_shot(server, workspace)
    (result,) = [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert "trap.configure was not called" in result and "full schema" in result
    assert raw_controls(result) == [] and "<U+009B>" in result and "<U+202E>" in result
    assert raw_controls(json.dumps(server.chat_requests()[-1], ensure_ascii=False)) == []
