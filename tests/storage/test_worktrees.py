"""Helpers' worktrees on real git repositories: made from the workspace as it is, read back as file
changes, removed, and a crashed session's left-overs pruned; outside a repository, said why not."""

from __future__ import annotations

import subprocess
import sys

import pytest

from nanohermes.storage.worktrees import WorktreeError, Worktrees, prune_leftovers
from tests.support.git_repos import git, make_repo, worktree_list


@pytest.fixture
def repo(tmp_path):
    return make_repo(
        tmp_path / "repo",
        {"a.py": "a = 1\n", "b.py": "b = 1\n", "gone.py": "x\n", ".gitignore": "build/\n", "src/c.py": "c\n"},
    )


def test_a_worktree_starts_from_the_workspace_as_it_is_and_leaves_the_users_git_alone(repo, isolated_home):
    (repo / "a.py").write_text("a = 2  # not committed\n")
    (repo / "new.py").write_text("new\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_text("ignored\n")
    status, head, branch = git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD"), git(repo, "branch")
    worktrees = Worktrees(isolated_home, "s1")
    worktree = worktrees.add("task1", repo)
    assert worktree.top.is_relative_to(isolated_home / "worktrees" / "s1")
    assert (worktree.workspace / "a.py").read_text() == "a = 2  # not committed\n"
    assert (worktree.workspace / "new.py").read_text() == "new\n"
    assert not (worktree.workspace / "build").exists()  # what .gitignore leaves out stays out
    assert (git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD"), git(repo, "branch")) == (
        status,
        head,
        branch,
    )
    assert str(worktree.top) in worktree_list(repo)
    worktrees.close()
    assert worktree_list(repo) == [str(repo.resolve())]
    assert not (isolated_home / "worktrees" / "s1").exists()


def test_changes_are_read_back_as_files_against_the_start(repo, isolated_home):
    (repo / "a.py").write_text("a = 2\n")  # uncommitted before the helper: not its change
    worktrees = Worktrees(isolated_home, "s1")
    worktree = worktrees.add("task1", repo)
    (worktree.workspace / "b.py").write_text("b = 2\n")
    (worktree.workspace / "gone.py").unlink()
    (worktree.workspace / "tool.sh").write_text("#!/bin/sh\n")
    (worktree.workspace / "tool.sh").chmod(0o755)
    (worktree.workspace / "blob.bin").write_bytes(b"\0\1\2")
    changes, diff = worktrees.changes(worktree)
    by_path = {change.path: change for change in changes}
    assert set(by_path) == {"b.py", "gone.py", "tool.sh", "blob.bin"}
    assert (by_path["b.py"].before, by_path["b.py"].after) == (b"b = 1\n", b"b = 2\n")
    assert (by_path["gone.py"].before, by_path["gone.py"].after) == (b"x\n", None)
    assert by_path["tool.sh"].before is None and by_path["tool.sh"].executable
    assert by_path["blob.bin"].after == b"\0\1\2"
    assert "-b = 1\n+b = 2" in diff and "a.py" not in diff
    worktrees.close()


def test_a_workspace_below_the_top_gets_its_place_in_the_worktree_and_its_changes_only(repo, isolated_home):
    worktrees = Worktrees(isolated_home, "s1")
    worktree = worktrees.add("task1", repo / "src")
    assert worktree.workspace == worktree.top / "src"
    (worktree.workspace / "c.py").write_text("c2\n")
    (worktree.top / "a.py").write_text("outside the workspace\n")
    changes, diff = worktrees.changes(worktree)
    assert [(c.path, c.after) for c in changes] == [("c.py", b"c2\n")]
    assert "a/c.py" in diff
    worktrees.close()


def test_outside_a_repository_or_before_a_commit_it_says_why_not(tmp_path, isolated_home):
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(WorktreeError, match="not in a git repository"):
        Worktrees(isolated_home, "s1").add("task1", plain)
    git(plain, "init", "-q")
    with pytest.raises(WorktreeError, match="no commit yet"):
        Worktrees(isolated_home, "s1").add("task1", plain)


CRASH = """
import os, sys
from pathlib import Path
from nanohermes.storage.worktrees import Worktrees
Worktrees(Path(sys.argv[1]), "crashed").add("task1", Path(sys.argv[2]))
os._exit(1)  # no clean-up: as a killed session leaves it
"""


def test_a_crashed_sessions_worktrees_are_pruned_and_a_live_ones_kept(repo, isolated_home):
    subprocess.run([sys.executable, "-c", CRASH, str(isolated_home), str(repo)], check=False, timeout=120)
    left = isolated_home / "worktrees" / "crashed" / "task1"
    assert left.is_dir() and len(worktree_list(repo)) == 2
    live = Worktrees(isolated_home, "live")
    kept = live.add("task1", repo)  # its lock is held by this process, as a running session's
    assert prune_leftovers(isolated_home) == ["crashed"]
    assert not left.exists() and kept.top.exists()
    assert worktree_list(repo) == [str(repo.resolve()), str(kept.top)]
    assert prune_leftovers(isolated_home) == []
    live.close()
    assert worktree_list(repo) == [str(repo.resolve())]
