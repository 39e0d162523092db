"""The edge of the CLI: whatever goes wrong inside, the user reads one paragraph, never a traceback."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import BIN, run_main_with
from tests.support.scripted_server import text

pytestmark = pytest.mark.subprocess

# A bug deep inside a run, injected into a fresh interpreter running the real entry point.
BUG = "import nanohermes.configure as c\ndef boom(*a, **k): raise ZeroDivisionError('an unexpected bug')\nc.load_config = boom"


def test_an_unexpected_exception_is_one_paragraph_naming_the_log_with_the_traceback(workspace, isolated_home):
    r = run_main_with(BUG, ["-p", "hi", "--base-url", "http://127.0.0.1:9/v1"], workspace)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "unexpected error (ZeroDivisionError: an unexpected bug)" in r.stderr
    logs = list((isolated_home / "logs").glob("crash-*.log"))
    assert len(logs) == 1 and str(logs[0]) in r.stderr
    assert "Traceback" in logs[0].read_text() and "in boom" in logs[0].read_text()
    assert oct(logs[0].stat().st_mode & 0o777) == "0o600"


def test_the_crash_log_never_holds_the_api_key(workspace, isolated_home):
    key = "sk-live-crash-0123456789"
    r = run_main_with(
        BUG, ["-p", f"use {key}", "--base-url", "http://127.0.0.1:9/v1"], workspace, {"OPENAI_API_KEY": key}
    )
    log = next((isolated_home / "logs").glob("crash-*.log")).read_text()
    assert r.returncode == 1 and key not in log and "use [redacted: OPENAI_API_KEY]" in log


def test_the_crash_log_falls_back_to_the_temp_dir_when_the_state_dir_is_unusable(workspace, tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    r = run_main_with(
        BUG,
        ["-p", "hi", "--base-url", "http://127.0.0.1:9/v1"],
        workspace,
        {"NANOHERMES_HOME": str(not_a_dir / "home")},
    )
    assert r.returncode == 1 and "Traceback" not in r.stderr
    named = r.stderr.split("the traceback is in ", 1)[1].split(" — ", 1)[0]
    assert Path(named).is_file() and "ZeroDivisionError" in Path(named).read_text()
    Path(named).unlink()


def test_an_unexpected_exception_in_a_json_run_is_also_an_error_object_on_stdout(workspace, isolated_home):
    r = run_main_with(BUG, ["-p", "hi", "--output-format", "json", "--base-url", "http://127.0.0.1:9/v1"], workspace)
    assert r.returncode == 1 and "Traceback" not in r.stderr + r.stdout
    error = json.loads(r.stdout)
    assert (
        error["type"] == "error"
        and error["exit_code"] == 1
        and "unexpected error (ZeroDivisionError" in error["message"]
    )


def test_a_task_on_stdin_that_is_not_utf8_is_read_not_crashed_on(server, workspace):
    server.add(text("ok"))
    r = subprocess.run(
        [BIN, "-p", "-", "--base-url", server.url],
        cwd=workspace,
        input=b"fix \xff this\n",
        capture_output=True,
        timeout=60,
    )
    assert r.returncode == 0 and b"Traceback" not in r.stderr
    assert server.chat_requests()[0]["messages"][-1]["content"] == "fix \ufffd this\n"
