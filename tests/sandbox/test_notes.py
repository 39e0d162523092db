"""What a blocked command's output tells the model: pure cases, then real sandboxed runs."""

from __future__ import annotations

import pytest

from nanohermes.sandbox import blocked_note
from nanohermes.sandbox.notes import blocked
from tests.sandbox.conftest import BACKENDS, run_in


def test_a_read_only_write_outside_the_workspace_is_named_with_its_path(policy):
    note = blocked_note(1, "touch: cannot touch '/etc/x': Read-only file system", policy)
    assert note.startswith("Sandbox: a write outside the workspace was blocked: /etc/x.")
    assert "unsandboxed: true" in note


def test_python_and_bash_error_shapes_are_read(policy):
    python = "OSError: [Errno 30] Read-only file system: '/usr/lib/x.pth'"
    bash = "bash: line 1: /opt/out.txt: Permission denied"
    assert "/usr/lib/x.pth" in blocked_note(1, python, policy)
    assert "/opt/out.txt" in blocked_note(2, bash, policy)


def test_a_git_hook_write_names_the_protected_path(policy, workspace):
    note = blocked_note(1, "bash: line 1: .git/hooks/pre-commit: Read-only file system", policy)
    assert f".git is read-only in the sandbox: {workspace}/.git/hooks/pre-commit" in note


def test_a_hidden_key_that_seems_missing_is_explained(policy, fake_home):
    note = blocked_note(1, f"cat: {fake_home}/.ssh/id_rsa: No such file or directory", policy)
    assert f"~/.ssh is hidden from commands: {fake_home}/.ssh/id_rsa" in note


def test_network_failures_say_the_network_is_off(policy):
    for output in (
        "curl: (6) Could not resolve host: pypi.org",
        "socket.gaierror: [Errno -3] Temporary failure in name resolution",
        "OSError: [Errno 101] Network is unreachable",
        "    sock.connect(sa)\nPermissionError: [Errno 13] Permission denied",
    ):
        assert "the network is off in the sandbox" in blocked_note(1, output, policy), output


def test_nothing_points_at_the_sandbox_gives_none(policy, workspace):
    assert blocked_note(1, "AssertionError: 2 != 3", policy) is None
    assert blocked_note(1, f"bash: {workspace}/build.sh: Permission denied", policy) is None  # chmod's business
    assert blocked_note(1, "cat: missing.txt: No such file or directory", policy) is None


def test_a_command_that_ran_unconfined_gets_no_note(make_policy):
    assert blocked_note(1, "touch: cannot touch '/etc/x': Read-only file system", make_policy(level="off")) is None


def test_a_command_that_exited_0_still_says_what_was_blocked(policy):
    found = blocked(0, "curl: (6) Could not resolve host: pypi.org", policy)
    assert found.note.startswith("Sandbox (the command exited 0, but this was blocked): the network is off")
    assert found.shown == "the network is off in the sandbox (network = false; its localhost is its own)"


def test_refused_hosts_and_unix_sockets_are_named(make_policy):
    policy = make_policy(allow_domains=("pypi.org",))
    found = blocked(0, "", policy, refused_hosts=["evil.test"])
    assert found.shown == "evil.test is not among the hosts commands may reach (allow_domains)"
    docker = "dial unix /var/run/docker.sock: socket: operation not permitted"
    assert "Unix sockets are blocked" in blocked(1, docker, policy).shown
    assert blocked(1, docker, make_policy(allow_unix_sockets=("/var/run/docker.sock",))) is None


def test_with_the_network_on_a_refused_connection_is_not_the_sandbox(make_policy):
    assert blocked_note(7, "curl: (7) Failed to connect: Connection refused", make_policy(network=True)) is None


def test_many_blocked_writes_make_one_short_note(policy):
    output = "\n".join(f"touch: cannot touch '/etc/x{i}': Read-only file system" for i in range(100))
    assert blocked_note(1, output, policy).count("was blocked") == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_real_blocked_commands_get_their_note(backend, policy, tmp_path, fake_home):
    done = run_in(policy, f"echo x > {tmp_path}/escaped.txt", backend)
    assert f"a write outside the workspace was blocked: {tmp_path}/escaped.txt" in blocked_note(
        done.returncode, done.stderr, policy
    )
    done = run_in(policy, "cat ~/.ssh/id_rsa", backend)
    assert "~/.ssh is hidden from commands" in blocked_note(done.returncode, done.stderr, policy)
    done = run_in(
        policy,
        "curl -sS --max-time 3 http://127.0.0.1:9/ || python3 -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:9', timeout=3)\"",
        backend,
    )
    assert "the network is off" in blocked_note(done.returncode, done.stderr, policy), done.stderr


def test_a_relative_path_in_the_workspace_under_read_only_is_named(make_policy, workspace):
    note = blocked_note(1, "touch: cannot touch 'out.txt': Read-only file system", make_policy(level="read-only"))
    assert (
        f"a write outside its temp dir (read-only: plan mode, or level read-only) was blocked: {workspace}/out.txt"
        in note
    )
