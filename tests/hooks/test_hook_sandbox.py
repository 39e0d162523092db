"""Hooks run where their actor may: a hook that runs after the model acted (the auto-test recipe) runs
the model's work, so it is confined unless the user says otherwise; a repository's hook always is;
a guard that cannot answer blocks. Through the real CLI, the scripted server and the real sandbox."""

from __future__ import annotations

import sys

import pytest

from tests.sandbox.conftest import NEEDS_BWRAP
from tests.support.cli import run_cli
from tests.support.hook_scripts import hooks_toml
from tests.support.scripted_server import ScriptedServer, call, text

pytestmark = [NEEDS_BWRAP, pytest.mark.subprocess]

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
