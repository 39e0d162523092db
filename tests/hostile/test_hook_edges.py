"""Hostile round three, the hooks' part: a repository's broken hooks table stops no run (its hooks
never run untrusted anyway), and what a hook `setsid`-ed away ends with the hook. Through the real
CLI and the scripted server."""

from __future__ import annotations

import time

import pytest

from tests.support.cli import run_cli
from tests.support.hook_scripts import hooks_toml
from tests.support.scripted_server import ScriptedServer, text

pytestmark = pytest.mark.subprocess


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
