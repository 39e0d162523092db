"""Real commands in the real sandbox: a workspace, a fake HOME with a key in ~/.ssh, a policy."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from nanohermes.sandbox import SandboxSettings, confine, policy_for, probe

CAPS = probe()
NEEDS_BWRAP = pytest.mark.skipif(CAPS.bwrap is None, reason=f"bubblewrap cannot run here: {CAPS.bwrap_problem}")
NEEDS_LANDLOCK = pytest.mark.skipif(
    CAPS.landlock_abi < 4, reason=f"this kernel's Landlock ABI is {CAPS.landlock_abi}; its TCP rules need ABI 4"
)
BACKENDS = [pytest.param("bwrap", marks=NEEDS_BWRAP), pytest.param("landlock", marks=NEEDS_LANDLOCK)]
KEY = "-----BEGIN OPENSSH PRIVATE KEY----- not a real key"


@pytest.fixture
def fake_home(tmp_path, monkeypatch) -> Path:
    """HOME under tmp, never the real one, with a private key where ssh keeps it."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(KEY)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return home


@pytest.fixture
def make_policy(workspace, isolated_home, fake_home, tmp_path):
    def make(**settings):
        return policy_for(SandboxSettings(**settings), workspace, isolated_home, temp_dir=tmp_path / "private-tmp")

    return make


@pytest.fixture
def policy(make_policy):
    return make_policy()


def landlock_accepting_gaps(policy, backend: str | None):
    """Landlock alone refuses a writable workspace (it cannot keep .git read-only there) unless the
    user accepts that; tests of its other rules accept it."""
    return replace(policy, landlock_gaps="accept") if backend == "landlock" else policy


def run_in(policy, command: str, backend: str | None = None, cwd: Path | None = None, timeout: float = 30):
    """`bash -c command` confined by `backend`, as run_command will start it."""
    policy = landlock_accepting_gaps(policy, backend)
    where = cwd or policy.workspace
    launch = confine(["bash", "-c", command], policy, where, prefer=backend)
    assert launch.backend == (backend or launch.backend)
    try:
        return subprocess.run(
            launch.argv,
            cwd=where,
            env=launch.environ(os.environ),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            pass_fds=launch.pass_fds,
        )
    finally:
        launch.release()
