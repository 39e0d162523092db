"""What the probe finds and what a policy gets, in words; confine fails closed."""

from __future__ import annotations

import pytest

from nanohermes.errors import SandboxUnavailable
from nanohermes.sandbox import Capabilities, assess, confine, probe
from tests.sandbox.conftest import NEEDS_BWRAP, NEEDS_LANDLOCK

NOTHING = Capabilities("linux", bwrap_problem="bwrap is not installed")
LANDLOCK_ONLY = Capabilities(
    "linux",
    bwrap_problem="bwrap fails here: No permissions to create new namespace",
    landlock_abi=7,
    launcher_python="/usr/bin/python3",
)
OLD_LANDLOCK = Capabilities(
    "linux", bwrap_problem="bwrap is not installed", landlock_abi=3, launcher_python="/usr/bin/python3"
)
BWRAP_HERE = Capabilities("linux", bwrap="/usr/bin/bwrap", landlock_abi=7, launcher_python="/usr/bin/python3")


def test_the_probe_runs_once_per_process():
    assert probe() is probe()


@NEEDS_BWRAP
@NEEDS_LANDLOCK
def test_the_probe_finds_bubblewrap_and_landlock_on_this_machine():
    caps = probe()
    assert caps.bwrap and caps.bwrap_problem == ""
    assert caps.landlock_abi >= 4


def test_bubblewrap_words_say_what_is_blocked(policy):
    words = assess(policy, BWRAP_HERE)
    assert (words.backend, words.enforced) == ("bwrap", True)
    assert words.summary.startswith(
        "commands run in bubblewrap: writes outside the workspace and the private temp dir blocked"
    )
    assert "read-only: .git, .nanohermes, .claude" in words.summary and "~/.ssh" in words.summary
    assert "Unix sockets blocked" in words.summary
    assert words.summary.endswith("network blocked")


def test_landlock_refuses_a_writable_workspace_it_cannot_keep_git_read_only_in(policy, make_policy):
    words = assess(policy, LANDLOCK_ONLY)
    assert (words.backend, words.enforced) == ("", False)
    assert "Landlock cannot keep .git, .nanohermes, .claude read-only inside the writable workspace" in words.summary
    assert 'level = "read-only"' in words.summary and 'landlock_gaps = "accept"' in words.summary
    assert assess(make_policy(level="read-only"), LANDLOCK_ONLY).enforced  # nothing writable to carve from


def test_landlock_words_name_what_it_cannot_protect(make_policy):
    words = assess(make_policy(landlock_gaps="accept"), LANDLOCK_ONLY)
    assert (words.backend, words.enforced) == ("landlock", True)
    assert "Landlock only (bwrap fails here: No permissions to create new namespace)" in words.summary
    assert "NOT protected inside the workspace: .git, .nanohermes, .claude" in words.summary
    assert "Unix sockets blocked" in words.summary
    assert words.summary.endswith("network: TCP blocked, UDP (DNS included) not")


def test_nothing_to_enforce_with_says_not_enforced_and_how_to_run_unconfined(policy):
    words = assess(policy, NOTHING)
    assert (words.backend, words.enforced) == ("", False)
    assert words.summary.startswith("NOT ENFORCED: no sandbox can confine commands here (bwrap is not installed;")
    assert 'set level = "off"' in words.summary and "apt install bubblewrap" in words.summary


def test_an_old_landlock_cannot_cut_the_network_so_only_network_true_uses_it(make_policy):
    assert not assess(make_policy(landlock_gaps="accept"), OLD_LANDLOCK).enforced
    assert "cannot block the network" in assess(make_policy(landlock_gaps="accept"), OLD_LANDLOCK).summary
    assert assess(make_policy(network=True, landlock_gaps="accept"), OLD_LANDLOCK).backend == "landlock"


def test_macos_uses_seatbelt_and_says_it_is_untested(policy):
    words = assess(policy, Capabilities("darwin", sandbox_exec="/usr/bin/sandbox-exec"))
    assert words.backend == "seatbelt" and "untested" in words.summary


def test_confine_refuses_when_the_level_cannot_be_enforced(policy, workspace):
    with pytest.raises(SandboxUnavailable) as refused:
        confine(["bash", "-c", "true"], policy, workspace, capabilities=NOTHING)
    assert "The command was not run" in str(refused.value)
    assert 'level = "off"' in str(refused.value)


def test_confine_refuses_a_forced_backend_that_cannot_run(policy, workspace):
    with pytest.raises(SandboxUnavailable):
        confine(["true"], policy, workspace, capabilities=LANDLOCK_ONLY, prefer="bwrap")


def test_level_off_runs_the_command_as_it_is_even_with_nothing_to_enforce(make_policy, workspace):
    launch = confine(["bash", "-c", "true"], make_policy(level="off"), workspace, capabilities=NOTHING)
    assert (launch.argv, launch.backend, launch.confined) == (["bash", "-c", "true"], "off", False)
    assert "commands run unconfined" in assess(make_policy(level="off"), NOTHING).summary


def test_landlock_refuses_a_workspace_that_holds_a_hidden_path(make_policy, fake_home, tmp_path):
    from nanohermes.sandbox import SandboxSettings, policy_for

    at_home = policy_for(
        SandboxSettings(landlock_gaps="accept"), fake_home, tmp_path / "state", temp_dir=tmp_path / "t"
    )
    words = assess(at_home, LANDLOCK_ONLY)
    assert (words.backend, words.enforced) == ("", False)
    assert "Landlock cannot hide ~/.ssh inside the writable" in words.summary
    assert "apt install bubblewrap" in words.summary and 'level = "off"' in words.summary
    assert assess(at_home, BWRAP_HERE).enforced  # bubblewrap hides it with a mount
    inside = tmp_path / "ws"
    state_inside = policy_for(
        SandboxSettings(landlock_gaps="accept"), inside, inside / ".state", temp_dir=tmp_path / "t"
    )
    assert not assess(state_inside, LANDLOCK_ONLY).enforced


def test_without_libseccomp_the_socket_filter_fails_closed_unless_sockets_are_listed(make_policy):
    caps = Capabilities("linux", bwrap="/usr/bin/bwrap", launcher_python="/usr/bin/python3", seccomp_problem="gone")
    words = assess(make_policy(), caps)
    assert not words.enforced and "the Unix-socket filter cannot be loaded: gone" in words.summary
    listed = assess(make_policy(allow_unix_sockets=("/run/docker.sock",)), caps)
    assert listed.enforced and "Unix sockets: only /run/docker.sock" in listed.summary


def test_the_words_name_the_hosts_a_command_may_reach(make_policy):
    words = assess(make_policy(allow_domains=("pypi.org", "*.pythonhosted.org")), BWRAP_HERE).summary
    assert words.endswith("network: only pypi.org, *.pythonhosted.org (through NanoHermes's proxy)")
    landlock = assess(make_policy(allow_domains=("pypi.org",), landlock_gaps="accept"), LANDLOCK_ONLY).summary
    assert "allow_domains needs bubblewrap, so no host is reachable" in landlock


@NEEDS_LANDLOCK
def test_landlock_alone_runs_no_command_in_a_writable_workspace_but_runs_them_read_only(make_policy, workspace):
    with pytest.raises(SandboxUnavailable, match=r"Landlock cannot keep \.git"):
        confine(["true"], make_policy(), workspace, prefer="landlock")
    with confine(["true"], make_policy(level="read-only"), workspace, prefer="landlock") as launch:
        assert launch.backend == "landlock"
