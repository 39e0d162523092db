"""Hooks run where their actor may: a hook that runs after the model acted (the auto-test recipe) runs
the model's work, so it is confined unless the user says otherwise; a repository's hook always is;
a guard that cannot answer blocks. Through the real CLI, the scripted server and the real sandbox."""

from __future__ import annotations

import sys
import time

import pytest

from tests.sandbox.conftest import NEEDS_BWRAP
from tests.support.cli import run_cli
from tests.support.hook_scripts import hooks_toml
from tests.support.scripted_server import ScriptedServer, call, text

pytestmark = NEEDS_BWRAP

AUTO_TEST = f'out=$({sys.executable} -m pytest -q -p no:cacheprovider 2>&1) && echo "$out" | tail -n 5 || {{ echo "$out" | tail -n 5 >&2; exit 2; }}'


def _model_writes_a_test_that_escapes(tmp_path, sandbox):
    """A user whose PostToolUse hook is the auto-test recipe; the model writes a test file that, once
    imported, writes outside the workspace. What the hook's run could touch decides the escape."""
    home, workspace, outside = tmp_path / "home", tmp_path / "ws", tmp_path / "outside"
    for folder in (home, workspace, outside):
        folder.mkdir()
    hook = ("PostToolUse", AUTO_TEST, "write_file|edit_file", *([sandbox] if sandbox is not None else []))
    (home / "config.toml").write_text(hooks_toml([hook]))
    planted = f"import pathlib\npathlib.Path({str(outside / 'pwned')!r}).write_text('ran as the user')\n\ndef test_ok():\n    pass\n"
    server = ScriptedServer().add(call("write_file", {"path": "test_planted.py", "content": planted}), text("done"))
    try:
        result = run_cli(
            ["-p", "add a test", "--base-url", server.url, "--yes"], workspace, {"NANOHERMES_HOME": str(home)}
        )
    finally:
        server.close()
    return result, outside / "pwned", server


@pytest.mark.parametrize("sandbox", [None, True])
def test_the_auto_test_hook_runs_the_models_test_confined(tmp_path, sandbox):
    result, pwned, server = _model_writes_a_test_that_escapes(tmp_path, sandbox)
    assert result.returncode == 0, result.stderr
    assert not pwned.exists()  # the write outside the workspace was blocked
    tool_result = next(m for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool")["content"]
    assert "Read-only file system" in tool_result  # the failing test's error reached the model


def test_a_hook_the_user_marks_unsandboxed_runs_with_their_rights(tmp_path):
    result, pwned, _ = _model_writes_a_test_that_escapes(tmp_path, False)
    assert result.returncode == 0, result.stderr
    assert pwned.read_text() == "ran as the user"  # the control: the escape the default stops is real


def test_a_trusted_workspace_hook_runs_in_the_sandbox_whatever_its_file_says(tmp_path):
    home, workspace, outside = tmp_path / "home", tmp_path / "ws", tmp_path / "outside"
    for folder in (home, workspace / ".nanohermes", outside):
        folder.mkdir(parents=True)
    hooks = [("SessionStart", f"touch {outside}/from-session-start; touch inside", None, False)]
    (workspace / ".nanohermes" / "config.toml").write_text(hooks_toml(hooks))
    server = ScriptedServer().add(text("hi"))
    try:
        args = ["-p", "hi", "--base-url", server.url, "--trust-workspace"]
        result = run_cli(args, workspace, {"NANOHERMES_HOME": str(home)})
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    assert (workspace / "inside").exists() and not (outside / "from-session-start").exists()


def test_a_repositorys_broken_hooks_table_is_a_warning_not_a_failed_run(tmp_path):
    home, workspace = tmp_path / "home", tmp_path / "ws"
    (workspace / ".nanohermes").mkdir(parents=True)
    home.mkdir()
    (workspace / ".nanohermes" / "config.toml").write_text('[[hooks.Nope]]\ncommand = "true"\n')
    server = ScriptedServer().add(text("fine"))
    try:
        result = run_cli(["-p", "hi", "--base-url", server.url], workspace, {"NANOHERMES_HOME": str(home)})
    finally:
        server.close()
    assert result.returncode == 0 and result.stdout.strip() == "fine", result.stderr
    assert "has no event 'Nope'" in result.stderr and "The workspace's hooks are ignored." in result.stderr


def test_what_a_hook_started_with_setsid_ends_with_it(tmp_path):
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    pid_file = tmp_path / "pid"
    detached = f"setsid bash -c 'echo $$ > {pid_file}; exec sleep 300' >/dev/null 2>&1 < /dev/null &"
    (home / "config.toml").write_text(hooks_toml([("SessionStart", detached, None)]))
    server = ScriptedServer().add(text("fine"))
    try:
        result = run_cli(["-p", "hi", "--base-url", server.url], workspace, {"NANOHERMES_HOME": str(home)})
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    if pid_file.exists():  # else it was ended before it could say its pid
        pid = int(pid_file.read_text())
        deadline = time.monotonic() + 60  # ended at the hook's end; a busy machine may take a moment to reap
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(pid)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False
