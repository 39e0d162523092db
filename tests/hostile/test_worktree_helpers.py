"""What a helper in a worktree of its own leaves behind is brought into the workspace only as plain
files inside it: a symbolic link it made (to a key, to /etc) is never written back, and a workspace
file turned into a link leading out while the helper ran is not written through. Real git, the
real sandbox, the scripted server."""

from __future__ import annotations

import pytest

from nanohermes.configure import load_config
from nanohermes.runtime import build_runtime
from nanohermes.sandbox.probe import probe
from tests.support.git_repos import make_repo
from tests.support.scripted_server import call, calls, text

pytestmark = pytest.mark.subprocess


def run(server, repo, monkeypatch, parent, helper) -> tuple[str, object]:
    replies = {"parent": list(parent), "helper": list(helper)}

    def answer(body):
        helper_asks = any("git worktree made for you" in (m.get("content") or "") for m in body["messages"])
        reply = replies["helper" if helper_asks else "parent"].pop(0)
        return reply() if callable(reply) else reply  # a reply made as it is asked for

    server.handler = answer
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    runtime = build_runtime(load_config(base_url=server.url, workspace=repo, mode="auto"), "p", lambda e: None, None)
    runtime.agent.run_turn("go")
    result = [m["content"] for m in runtime.agent.messages if m["role"] == "tool"][-1]
    return result, runtime


TASK = ("task", {"description": "d", "prompt": "p", "isolation": "worktree"})


@pytest.mark.skipif(probe().bwrap is None, reason="the helper's `ln` runs in bubblewrap")
def test_a_link_a_helper_made_is_never_written_back(server, tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n"})
    result, runtime = run(
        server,
        repo,
        monkeypatch,
        parent=[call(*TASK), text("done")],
        helper=[
            calls(
                ("run_command", {"command": "ln -s /etc/passwd leak"}),
                ("write_file", {"path": "b.py", "content": "b\n"}),
            ),
            text("made them"),
        ],
    )
    assert not (repo / "leak").exists() and not (repo / "leak").is_symlink()
    assert (repo / "b.py").read_text() == "b\n"
    assert "NOT brought in: leak (a symbolic link or submodule: not written back)" in result
    runtime.close()


def test_a_workspace_file_turned_into_a_link_out_is_not_written_through(server, tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n"})
    outside = tmp_path / "outside.py"
    outside.write_text("not yours\n")

    def swap_and_write():
        (repo / "a.py").unlink()
        (repo / "a.py").symlink_to(outside)  # meanwhile, in the workspace
        return call("write_file", {"path": "a.py", "content": "a = 2\n"})

    result, runtime = run(
        server, repo, monkeypatch, parent=[call(*TASK), text("done")], helper=[swap_and_write, text("changed a.py")]
    )
    assert outside.read_text() == "not yours\n"
    assert "NOT brought in: a.py (" in result and "outside the workspace" in result
    runtime.close()
