""".git, .nanohermes and .claude are read-only as wholes: nothing a command runs changes a byte under them.

The `.git` swap (rename it away, put a copy with a hooks path in its place) was a full escape
while only .git/hooks and .git/config were mounted read-only: the user's next git command ran
the planted hook. A property test tries random sequences of mv, cp, ln, rm, mkdir and writes
over the workspace's top level and the protected paths, all in one real bubblewrap run.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nanohermes.sandbox import SandboxSettings, policy_for
from tests.sandbox.conftest import NEEDS_BWRAP, run_in

pytestmark = NEEDS_BWRAP

PROTECTED = (".git", ".nanohermes", ".claude")
NAMES = (".git", ".git/hooks", ".git/config", ".git/HEAD", ".nanohermes", ".nanohermes/config.toml", ".claude",
         ".claude/settings.json", ".git_old", "x", "x/.git", "y", ".githooks")  # fmt: skip


def _repo(workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "a.txt").write_text("one\n")
    for part in (".nanohermes", ".claude"):
        (workspace / part).mkdir()
    (workspace / ".nanohermes" / "config.toml").write_text("[permissions]\n")
    (workspace / ".claude" / "settings.json").write_text("{}\n")


@pytest.fixture
def workspace_factory(tmp_path, isolated_home, fake_home):
    """A fresh repository and its policy per call (one per hypothesis example)."""
    counter = itertools.count()

    def make():
        workspace = tmp_path / f"ws{next(counter)}"
        workspace.mkdir()
        _repo(workspace)
        return workspace, policy_for(SandboxSettings(), workspace, isolated_home, temp_dir=tmp_path / "private-tmp")

    return make


def _fingerprint(workspace: Path) -> dict[str, str]:
    """Every entry under the protected paths: its kind, mode and bytes (or link target)."""
    seen = {}
    for name in PROTECTED:
        top = workspace / name
        if not top.exists() and not top.is_symlink():
            seen[name] = "missing"
            continue
        for root, dirs, files in os.walk(top):
            for entry in [root, *(os.path.join(root, f) for f in files + dirs)]:
                info = os.lstat(entry)
                if os.path.islink(entry):
                    body = "link:" + os.readlink(entry)
                elif os.path.isfile(entry):
                    body = hashlib.sha256(Path(entry).read_bytes()).hexdigest()
                else:
                    body = "dir"
                seen[os.path.relpath(entry, workspace)] = f"{info.st_mode:o} {body} ino={info.st_ino}"
    return seen


def test_the_git_swap_fails_and_the_users_next_checkout_runs_no_planted_hook(policy, workspace, tmp_path):
    _repo(workspace)
    subprocess.run(["git", "-C", str(workspace), "add", "a.txt"], check=True)
    subprocess.run(["git", "-C", str(workspace), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "1"])
    before = _fingerprint(workspace)
    pwned = tmp_path / "pwned"
    done = run_in(
        policy,
        "mv .git .git_old && cp -r .git_old .git && git config core.hooksPath .githooks;"
        f" mkdir -p .githooks && printf '#!/bin/sh\\ntouch {pwned}\\n' > .githooks/post-checkout"
        " && chmod +x .githooks/post-checkout; git config core.hooksPath .githooks;"
        " ln -sfn .githooks .git/hooks; rm -rf .git; echo done",
    )
    assert "done" in done.stdout
    assert _fingerprint(workspace) == before
    subprocess.run(["git", "-C", str(workspace), "checkout", "-q", "-b", "next"], check=True)  # the user, later
    assert not pwned.exists()


OPS = st.sampled_from(["mv", "cp -r", "ln -sfn", "ln", "rm -rf", "mkdir -p", "write", "rename-dir-over"])


@st.composite
def _steps(draw):
    op = draw(OPS)
    a, b = draw(st.sampled_from(NAMES)), draw(st.sampled_from(NAMES))
    if op == "write":
        return f"echo evil > {shlex.quote(a)}"
    if op in ("rm -rf", "mkdir -p"):
        return f"{op} {shlex.quote(a)}"
    if op == "rename-dir-over":  # mv -T: replace b by a, directories included
        return f"mv -T {shlex.quote(a)} {shlex.quote(b)}"
    return f"{op} {shlex.quote(a)} {shlex.quote(b)}"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=st.lists(_steps(), min_size=1, max_size=12))
def test_no_sequence_of_file_operations_changes_a_byte_under_a_protected_path(script, workspace_factory):
    workspace, policy = workspace_factory()
    before = _fingerprint(workspace)
    run_in(policy, " ; ".join(script) + " ; true")
    assert _fingerprint(workspace) == before, script


def test_a_worktrees_git_directory_outside_the_workspace_stays_read_only(workspace, isolated_home, tmp_path):
    main = tmp_path / "main"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    (main / "a").write_text("a\n")
    git = ["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "a"], check=True)
    subprocess.run([*git, "commit", "-qm", "1"], check=True)
    tree = tmp_path / "tree"
    subprocess.run([*git, "worktree", "add", "-q", str(tree)], check=True)
    policy = policy_for(SandboxSettings(), tree, isolated_home, temp_dir=tmp_path / "private-tmp")
    assert main.resolve() / ".git" in policy.read_only
    config = (main / ".git" / "config").read_text()
    done = run_in(policy, "git config core.fsmonitor 'touch /tmp/x'; echo 'gitdir: /tmp/evil' > .git", cwd=tree)
    assert done.returncode != 0
    assert (main / ".git" / "config").read_text() == config
    assert (tree / ".git").read_text().startswith(f"gitdir: {main.resolve()}")
