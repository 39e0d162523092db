"""Helpers in worktrees of their own in the REPL, in a real pseudo-terminal: two run at once, their
lines say whose they are, bringing their changes in asks one question at a time, a "no" is held and
`/tasks apply` brings it in."""

import pexpect
import pytest

from tests.loop.test_worktree_helpers import A_NEW, B_NEW, Script, in_worktree
from tests.support.git_repos import make_repo
from tests.support.scripted_server import call, calls, text
from tests.ui.test_repl import ready, spawn

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]


def test_two_helpers_at_once_ask_in_turn_and_tasks_applies_what_was_declined(server, tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n", "b.py": "b = 1\n"})
    script = Script(
        server,
        parent=[calls(in_worktree("A", "change a.py"), in_worktree("B", "change b.py")), text("helpers finished")],
        helpers={
            "A": [call("write_file", {"path": "a.py", "content": A_NEW}), text("A done")],
            "B": [call("write_file", {"path": "b.py", "content": B_NEW}), text("B done")],
        },
    )
    script.together("A", "B")
    child = spawn(server, repo, "--mode", "ask")
    child.send("change both\r")
    child.expect(r"┆ task\d → write_file")
    answers = {}
    for _ in range(2):
        child.expect(r"from helper 'helper ([AB])'")
        which = child.match.group(1)
        child.expect("allow\\?")
        answers[which] = "y" if which == "A" else "n"
        child.send(answers[which] + "\r")
    child.expect("helpers finished")
    ready(child)
    assert (repo / "a.py").read_text() == A_NEW and (repo / "b.py").read_text() == "b = 1\n"
    child.send("/tasks\r")
    child.expect(r"(task\d)\s+held: 1 file not brought in")
    name = child.match.group(1)
    ready(child)
    child.send(f"/tasks apply {name}\r")
    child.expect(f"{name}: applied b.py")
    ready(child)
    child.send("/exit\r")
    child.expect(pexpect.EOF)
    assert (repo / "b.py").read_text() == B_NEW
