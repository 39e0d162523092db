"""Sockets and process groups through the real sandbox: the network is off unless allowed, and
killing the command's process group (run_command's Ctrl-C and timeout) ends all that runs inside."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import threading
import time

import pytest

from nanohermes.sandbox import confine
from tests.sandbox.conftest import BACKENDS, NEEDS_BWRAP, NEEDS_LANDLOCK, landlock_accepting_gaps, run_in
from tests.support.processes import alive
from tests.support.timing import HANG_GUARD_S

CONNECT = (
    "python3 -c \"import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 3).close()\" {port}"
)


def _connected(listener: socket.socket) -> bool:
    readable, _, _ = select.select([listener], [], [], 0.5)
    return bool(readable)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_connect_to_a_local_listener_fails_with_the_network_off(backend, policy):
    with socket.create_server(("127.0.0.1", 0)) as listener:
        done = run_in(policy, CONNECT.format(port=listener.getsockname()[1]), backend)
        assert done.returncode != 0
        assert not _connected(listener)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_connect_to_a_local_listener_works_with_the_network_on(backend, make_policy):
    policy = make_policy(network=True)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        done = run_in(policy, CONNECT.format(port=listener.getsockname()[1]), backend)
        assert done.returncode == 0, done.stderr
        assert _connected(listener)


@NEEDS_LANDLOCK
def test_landlock_denies_binding_a_tcp_port_with_the_network_off(policy):
    done = run_in(policy, "python3 -c \"import socket; socket.create_server(('127.0.0.1', 0))\"", "landlock")
    assert done.returncode != 0
    assert "PermissionError" in done.stderr


def _group_kill_ends(policy, workspace, backend, command: str, count: int) -> None:
    launch = confine(["bash", "-c", command], landlock_accepting_gaps(policy, backend), workspace, prefer=backend)
    proc = subprocess.Popen(
        launch.argv, cwd=workspace, env=launch.environ(os.environ), start_new_session=True, pass_fds=launch.pass_fds
    )
    found: list[int] = []
    try:
        deadline = time.monotonic() + HANG_GUARD_S  # a loop that ends as soon as it holds
        while len(found := _sleeps_of(proc.pid)) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(found) == count, found
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + HANG_GUARD_S
        while any(alive(pid) for pid in found) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not any(alive(pid) for pid in found)
    finally:
        for pid in found:  # the test must not leave sleeps behind, whatever failed
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        launch.release()


@pytest.mark.parametrize("backend", BACKENDS)
def test_killing_the_process_group_ends_the_command_and_its_background_children(backend, policy, workspace):
    _group_kill_ends(policy, workspace, backend, "sleep 300 & sleep 301 & sleep 302", 3)


@NEEDS_BWRAP
def test_killing_the_process_group_ends_even_what_left_the_group_inside_bubblewrap(policy, workspace):
    """Its pid namespace dies with bwrap: a `setsid` daemon does not outlive the command."""
    _group_kill_ends(policy, workspace, "bwrap", "sleep 300 & setsid sleep 301 & sleep 302", 3)


def _sleeps_of(root: int) -> list[int]:
    """The `sleep` processes descended from `root`, from /proc."""
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    comm, rest = f.read().rsplit(b")", 1)
                parents[int(name)] = (int(rest.split()[1]), comm.split(b"(", 1)[1])
            except (OSError, IndexError, ValueError):
                continue
    found = []
    for pid, (_, comm) in parents.items():
        ancestor = pid
        while ancestor in parents and ancestor != root:
            ancestor = parents[ancestor][0]
        if ancestor == root and comm == b"sleep" and alive(pid):
            found.append(pid)
    return found


@NEEDS_BWRAP
def test_a_sandbox_started_from_a_thread_that_ends_keeps_running(policy, workspace):
    """Background tasks start from worker threads: the sandbox must not die with its thread
    (bwrap's --die-with-parent binds its parent-death signal to the thread)."""
    started = []
    launch = confine(["sleep", "30"], policy, workspace)

    def start():
        started.append(
            subprocess.Popen(
                launch.argv,
                cwd=workspace,
                env=launch.environ(os.environ),
                start_new_session=True,
                pass_fds=launch.pass_fds,
            )
        )
        time.sleep(0.3)  # the thread ends once bwrap is up (ending sooner, it races bwrap's set-up)

    thread = threading.Thread(target=start)
    thread.start()
    thread.join()
    try:
        time.sleep(0.5)
        assert started[0].poll() is None
    finally:
        os.killpg(started[0].pid, signal.SIGKILL)
        started[0].wait()
        launch.release()


@NEEDS_BWRAP
def test_the_agent_and_other_processes_are_invisible_inside(policy):
    done = run_in(policy, f"cat /proc/{os.getpid()}/environ; ls /proc | grep -c '^[0-9]'")
    assert int(done.stdout.strip().splitlines()[-1]) < 5  # bwrap's init, bash, ls, grep
    assert "NANOHERMES_HOME" not in done.stdout


@NEEDS_BWRAP
def test_root_inside_cannot_remount_the_file_system_writable(policy, tmp_path):
    target = tmp_path / "outside.txt"
    done = run_in(policy, f"mount -o remount,rw,bind / ; mount -o remount,rw,bind {tmp_path}; echo x > {target}")
    assert done.returncode != 0
    assert not target.exists()
