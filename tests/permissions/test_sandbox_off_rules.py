"""With the sandbox off by the user's choice, nothing is left for a command to leave: a plain allow
rule decides it, whether or not the model asked to run it unsandboxed. Through the real CLI."""

from __future__ import annotations

import pytest

from tests.support.cli import run_cli
from tests.support.scripted_server import call, text

pytestmark = pytest.mark.subprocess


def test_a_plain_allow_rule_runs_commands_when_the_user_turned_the_sandbox_off(server, workspace, isolated_home):
    (isolated_home / "config.toml").write_text(
        '[sandbox]\nlevel = "off"\n[permissions]\nallow = ["run_command:python3 *"]\n'
    )
    server.add(
        call("run_command", {"command": "python3 -c print"}),
        call("run_command", {"command": "python3 --version", "unsandboxed": True, "reason": "needs it"}),
        call("run_command", {"command": "touch made.txt"}),
        text("done"),
    )
    result = run_cli(["-p", "go", "--base-url", server.url], workspace)
    results = [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert results[0].startswith("$ python3 -c print") and results[1].startswith("$ python3 --version")
    assert results[2].startswith("refused: run_command needs the user's approval")  # no rule: still asked
    assert "--allow 'run_command:touch made.txt'" in results[2]  # the plain rule, not an (unsandboxed) one
    assert result.returncode == 3 and not (workspace / "made.txt").exists()
