"""doctor's live proof, run for real."""

from __future__ import annotations

import pytest

from nanohermes.sandbox import Capabilities, prove
from tests.sandbox.conftest import BACKENDS

NAMES = ["write outside the workspace", "connect to a local port", "read a hidden path", "write the temp dir"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_proof_finds_every_attempt_blocked_and_the_temp_dir_writable(backend, policy, isolated_home):
    checks = prove(policy, prefer=backend)
    assert [c.name for c in checks] == NAMES
    assert [c.outcome for c in checks] == ["blocked", "blocked", "blocked", "allowed"], checks
    assert all(c.ok for c in checks)
    assert list((isolated_home / "sessions").iterdir()) == []  # the canary is gone


@pytest.mark.parametrize("backend", BACKENDS)
def test_with_the_network_on_the_proof_reports_the_connect_allowed(backend, make_policy):
    checks = prove(make_policy(network=True), prefer=backend)
    assert checks[1].outcome == "allowed" and checks[1].ok


def test_the_proof_says_not_run_when_nothing_can_enforce(policy):
    checks = prove(policy, capabilities=Capabilities("linux", bwrap_problem="bwrap is not installed"))
    assert {c.outcome for c in checks} == {"not run"}
    assert not any(c.ok for c in checks)
    assert "NOT ENFORCED" in checks[0].detail
