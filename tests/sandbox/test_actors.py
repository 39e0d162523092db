"""sandbox/actors.py, pure: the policy each actor's command runs under. A language server (the
user's program reading the model's work) runs read-only confined unless the user says not; the
user's choice of level "off" confines nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from nanohermes.sandbox.actors import MODEL, REPOSITORY, USER, command_policy, server_sandboxed
from nanohermes.sandbox.policy import SandboxSettings, build_policy

WORKSPACE, TEMP = Path("/w"), Path("/t")


def session(level="workspace-write"):
    settings = SandboxSettings(level=level)
    return build_policy(settings, workspace=WORKSPACE, state_dir=Path("/s"), user_home=Path("/h"), temp_dir=TEMP)


def test_a_language_server_runs_read_only_confined_unless_the_user_says_not():
    policy = command_policy(USER, session(), sandbox=server_sandboxed(None), read_only=True)
    assert policy.level == "read-only" and policy.writable == (TEMP,)
    assert command_policy(USER, session(), sandbox=server_sandboxed(False), read_only=True) is None
    assert command_policy(USER, None, sandbox=server_sandboxed(None), read_only=True) is None  # level off


@pytest.mark.parametrize("actor", [MODEL, REPOSITORY])
def test_read_only_narrows_any_confined_actor_and_leaves_a_read_only_session_as_it_is(actor):
    assert command_policy(actor, session()).level == "workspace-write"
    assert command_policy(actor, session(), read_only=True).level == "read-only"
    read_only = session("read-only")
    assert command_policy(actor, read_only, read_only=True) == read_only
