"""`-p --output-format json|stream-json` against its schema (docs/script-output.schema.json):
every line of real runs validated, the session line first, and `ok` false for every call that
did not succeed — a command that exited non-zero, one refused in plan mode, one interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from functools import cache
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from nanohermes.cli import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK
from tests.support.cli import BIN
from tests.support.scripted_server import Error, Reply, call, text
from tests.test_cli_sessions import ask

pytestmark = pytest.mark.subprocess

SCHEMA = Path(__file__).resolve().parents[1] / "docs" / "script-output.schema.json"
STARTS_WITHIN_S = 60  # a command's start under load: generous, never what is measured


@cache
def schema() -> dict:
    return json.loads(SCHEMA.read_text())


def valid(obj: dict, definition: str | None = None) -> dict:
    root = schema()
    checked = root if definition is None else {**root, "$ref": f"#/$defs/{definition}", "oneOf": None}
    checked = {k: v for k, v in checked.items() if v is not None}
    errors = [e.message for e in Draft202012Validator(checked).iter_errors(obj)]
    assert not errors, f"{obj} against {definition or 'a line'}: {errors}"
    return obj


def stream_lines(stdout: str) -> list[dict]:
    lines = [valid(json.loads(line)) for line in stdout.splitlines()]
    assert lines[0]["type"] == "session" and lines[-1]["type"] in ("result", "error")
    assert [line["type"] for line in lines].count("session") == 1
    return lines


def finished_calls(lines: list[dict]) -> dict[str, dict]:
    return {e["call_id"]: e for e in lines if e["type"] == "tool_finished"}


def test_a_failed_command_is_not_ok_in_stream_json_and_json_and_the_session_line_comes_first(server, workspace):
    script = [
        call("run_command", {"command": "echo fine"}),
        call("run_command", {"command": "echo broken; exit 3"}),
        text("One of them failed."),
    ]
    server.add(*script)
    args = ("--yes", "--sandbox", "off", "--deny", "no_such_tool")  # the rule's warning comes while the session builds
    r = ask(server, workspace, "run both", "--output-format", "stream-json", *args)
    assert r.returncode == EXIT_OK, r.stderr
    lines = stream_lines(r.stdout)
    assert any(e["type"] == "notice" and "no_such_tool" in e["text"] for e in lines[1:])
    fine, broken = finished_calls(lines).values()
    assert (fine["ok"], fine["facts"]["exit_code"]) == (True, 0)
    assert (broken["ok"], broken["facts"]["exit_code"]) == (False, 3)
    assert [c["ok"] for c in lines[-1]["tool_calls"]] == [True, False]
    server.add(*script)
    r = ask(server, workspace, "run both", "--output-format", "json", *args)
    (result,) = r.stdout.splitlines()
    assert [c["ok"] for c in valid(json.loads(result), "json_output")["tool_calls"]] == [True, False]


def test_a_call_refused_in_plan_mode_and_a_retried_reply_validate(server, workspace):
    server.add(
        Reply(content="Let me start over", drop_after=2),  # some of the reply streams, then the connection drops
        call("run_command", {"command": "touch made.txt"}),
        text("Plan mode: I only read."),
    )
    r = ask(server, workspace, "make it", "--output-format", "stream-json", "--mode", "plan")
    lines = stream_lines(r.stdout)
    assert "stream_restarted" in [e["type"] for e in lines]
    (refused,) = finished_calls(lines).values()
    assert refused["ok"] is False and not (workspace / "made.txt").exists()


def test_a_failure_is_an_error_line_in_both_formats(server, workspace):
    for output_format in ("stream-json", "json"):
        server.add(Error(401, {"error": {"message": "bad key", "type": "invalid_request_error"}}))
        r = ask(server, workspace, "hi", "--output-format", output_format)
        assert r.returncode == EXIT_FAILURE
        last = json.loads(r.stdout.splitlines()[-1])
        assert valid(last, "json_output")["type"] == "error" and "rejected the API key" in last["message"]
        if output_format == "stream-json":
            stream_lines(r.stdout)


def test_an_interrupted_command_is_not_ok_and_the_run_says_interrupted(server, workspace):
    server.add(call("run_command", {"command": "touch running; sleep 60"}), text("never asked"))
    argv = [BIN, "-p", "wait", "--base-url", server.url, "--output-format", "stream-json", "--yes", "--sandbox", "off"]
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    with subprocess.Popen(
        argv, cwd=workspace, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
    ) as p:
        seen = []
        for line in p.stdout:
            seen.append(line)
            if '"tool_started"' in line:
                break
        deadline = time.monotonic() + STARTS_WITHIN_S
        while not (workspace / "running").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(p.pid, signal.SIGINT)
        out, _ = p.communicate(timeout=STARTS_WITHIN_S)
    lines = stream_lines("".join(seen) + out)
    assert p.returncode == EXIT_INTERRUPTED
    (stopped,) = finished_calls(lines).values()
    assert stopped["ok"] is False and stopped["facts"]["interrupted"] is True
    assert lines[-1]["stop_reason"] == "interrupted" and lines[-1]["tool_calls"][0]["ok"] is False
