"""doctor's live proof, run for real."""

from __future__ import annotations

import pytest

from nanohermes.sandbox import Capabilities, prove
from tests.sandbox.conftest import BACKENDS, NEEDS_BWRAP, landlock_accepting_gaps

NAMES = [
    "write outside the workspace",
    "connect to a local port",
    "read a hidden path",
    "connect to a Unix socket",
    "write the temp dir",
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_proof_finds_every_attempt_blocked_and_the_temp_dir_writable(backend, policy, isolated_home):
    checks = prove(landlock_accepting_gaps(policy, backend), prefer=backend)
    assert [c.name for c in checks] == NAMES
    assert [c.outcome for c in checks] == ["blocked", "blocked", "blocked", "blocked", "allowed"], checks
    assert all(c.ok for c in checks)
    assert not list(isolated_home.glob(".sandbox-proof-*"))  # the canary is gone


@pytest.mark.parametrize("backend", BACKENDS)
def test_with_the_network_on_the_proof_reports_the_connect_allowed(backend, make_policy):
    checks = prove(landlock_accepting_gaps(make_policy(network=True), backend), prefer=backend)
    assert checks[1].outcome == "allowed" and checks[1].ok


def test_the_proof_says_not_run_when_nothing_can_enforce(policy):
    checks = prove(policy, capabilities=Capabilities("linux", bwrap_problem="bwrap is not installed"))
    assert {c.outcome for c in checks} == {"not run"}
    assert not any(c.ok for c in checks)
    assert "NOT ENFORCED" in checks[0].detail


@NEEDS_BWRAP
def test_the_proof_reaches_a_listed_host_through_the_proxy_and_not_another(make_policy):
    checks = prove(make_policy(allow_domains=("127.0.0.2",)))
    found = {c.name: c for c in checks}
    assert found["reach 127.0.0.2 (listed) through the proxy"].outcome == "allowed", checks
    assert found["reach a host not listed"].outcome == "blocked"
    assert all(c.ok for c in checks), checks


@NEEDS_BWRAP
def test_a_listed_unix_socket_leaves_the_others_blocked(make_policy, tmp_path):
    checks = prove(make_policy(allow_unix_sockets=(str(tmp_path / "docker.sock"),)))
    assert {c.name: c.outcome for c in checks}["connect to a Unix socket"] == "blocked"
