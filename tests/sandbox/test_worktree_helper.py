"""A helper in a worktree of its own runs its commands in the real bubblewrap, confined to that
worktree: it may write there (and what it writes is brought in), never the user's workspace, the
main `.git` (hooks, the worktree's own git directory), the worktree's `.git` pointer, nor read the
state directory the worktree is kept in."""

from __future__ import annotations

import pytest

from nanohermes.configure import load_config
from nanohermes.runtime import build_runtime
from tests.sandbox.conftest import NEEDS_BWRAP
from tests.support.git_repos import make_repo
from tests.support.scripted_server import call, text

pytestmark = [NEEDS_BWRAP, pytest.mark.subprocess]


def probes(repo, home) -> str:
    """One command trying each door; a line per door says whether it held."""
    tries = {
        "inside": "touch made.txt",
        "workspace": f"echo x > {repo}/planted.txt",
        "hooks": f"echo x > {repo}/.git/hooks/post-checkout",
        "gitdir": f"echo x >> {repo}/.git/worktrees/task1/HEAD",
        "pointer": "echo 'gitdir: /tmp/elsewhere' > .git",
        "state": f"cat {home}/sessions/parent.jsonl",
    }
    return "; ".join(f"{{ {cmd}; }} 2>/dev/null && echo {name}-done || echo {name}-held" for name, cmd in tries.items())


def test_a_worktree_helpers_commands_write_its_worktree_and_nothing_of_the_users(
    server, tmp_path, monkeypatch, isolated_home
):
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n"}).resolve()
    before = sorted(p.name for p in (repo / ".git" / "hooks").iterdir())
    server.add(
        call("task", {"description": "probe", "prompt": "try the doors", "isolation": "worktree"}),
        call("run_command", {"command": probes(repo, isolated_home.resolve())}),
        text("tried"),
        text("done"),
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = load_config(base_url=server.url, workspace=repo, mode="auto")
    runtime = build_runtime(config, "parent", lambda event: None, approve=None)
    try:
        runtime.agent.run_turn("probe")
    finally:
        runtime.close()
    said = next(m["content"] for m in server.chat_requests()[2]["messages"] if m["role"] == "tool")
    printed = said.split("[stdout]", 1)[1].split()  # what the command printed, not the command shown
    for door, outcome in {
        "inside": "done",
        "workspace": "held",
        "hooks": "held",
        "gitdir": "held",
        "pointer": "held",
        "state": "held",
    }.items():
        assert f"{door}-{outcome}" in printed, said
    result = [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"][-1]
    assert "brought into the workspace: made.txt" in result, result
    assert (repo / "made.txt").exists()  # what it wrote in its worktree was brought in
    assert not (repo / "planted.txt").exists()
    assert sorted(p.name for p in (repo / ".git" / "hooks").iterdir()) == before
