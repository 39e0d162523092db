"""A language server is the user's program reading what the model wrote: it runs in the session's
sandbox, read-only (sandbox/actors.py), unless the user sets `sandbox = false`; with the sandbox
on, its diagnostics still come. The real bubblewrap (or Landlock)."""

from __future__ import annotations

import shutil

import pytest

from nanohermes.lsp import Diagnostics
from nanohermes.lsp.settings import parse_lsp_table
from nanohermes.sandbox.policy import SandboxSettings, policy_for
from nanohermes.sandbox.probe import probe
from nanohermes.tools.diagnosed import MADE
from tests.support.lsp_servers import fake_command, lsp_table, pylsp_command
from tests.support.timing import HANG_GUARD_S

pytestmark = [
    pytest.mark.skipif(
        not (probe().bwrap or probe().landlock_abi >= 4), reason="neither bubblewrap nor Landlock ABI 4 works here"
    ),
    pytest.mark.subprocess,
]
WRITTEN = "written-by-server.txt"


@pytest.fixture
def session_policy(workspace, isolated_home):
    policy = policy_for(SandboxSettings(), workspace, isolated_home)  # workspace-write: the model's commands may write
    yield policy
    shutil.rmtree(policy.temp_dir, ignore_errors=True)


def check(workspace, policy, command, **keys) -> str:
    keys = {"timeout": HANG_GUARD_S, "startup_timeout": HANG_GUARD_S, **keys}
    checker = Diagnostics(parse_lsp_table(lsp_table(command, **keys), workspace / "c.toml"), workspace, policy)
    try:
        return checker.after_change(workspace / "app.py", "app.py", "x = 1\n", "x = 1\ny = confined_missing\n")
    finally:
        checker.close()


def test_pylsp_confined_read_only_still_reports_new_problems(workspace, session_policy):
    (workspace / "app.py").write_text("x = 1\ny = confined_missing\n")
    assert check(workspace, session_policy, pylsp_command()).endswith("2:5 undefined name 'confined_missing'")


def test_a_server_cannot_write_the_workspace_unless_the_user_sets_sandbox_false(workspace, session_policy):
    (workspace / "app.py").write_text("x = 1\n")
    said = check(workspace, session_policy, fake_command("writer"), timeout=0.05)
    assert f"{MADE}; diagnostics did not come" in said  # it never publishes: only its write is under test
    assert not (workspace / WRITTEN).exists()
    check(workspace, session_policy, fake_command("writer"), timeout=0.05, sandbox=False)
    assert (workspace / WRITTEN).exists()
