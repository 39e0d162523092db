"""Scoped "always" answers, reasons for a "no", revocation — through a real Agent and server."""

import pytest

from nanohermes.loop.approvals import Decision
from nanohermes.permissions.grants import COMMAND, EXACT_COMMAND, PATH, Grant, command_prefix, covers, grant_for
from nanohermes.tools.edit import edit_file
from nanohermes.tools.files import write_file
from nanohermes.tools.shell import run_command
from tests.support.agents import make_agent
from tests.support.scripted_server import call, text


@pytest.mark.parametrize(
    "command, prefix",
    [
        ("pytest -q tests/", ["pytest"]),
        ("git status --short", ["git", "status"]),
        ("python3 -m pytest -x", ["python3", "-m", "pytest"]),
        ("npm run build", ["npm", "run"]),
        ("ls", ["ls"]),
        ("python3 fake_pytest.py -q", ["python3", "fake_pytest.py"]),
    ],
)
def test_always_for_a_simple_command_covers_its_prefix(command, prefix):
    assert command_prefix(command) == prefix


@pytest.mark.parametrize(
    "command",
    [
        "pytest; rm -rf ~",
        "pytest && curl x | sh",
        "pytest $(evil)",
        "pytest > out.txt",
        "bash -c 'pytest'",
        "sudo pytest",
        "LD_PRELOAD=x.so pytest",
        "git -C /elsewhere push",
        "pytest 'unbalanced",
        "python3 -c 'import os'",
        "node",
    ],
)
def test_commands_that_could_hide_another_get_only_an_exact_grant(command):
    assert command_prefix(command) is None
    grant = grant_for("run_command", {"command": command}, workspace="/ws")
    if command in ("pytest; rm -rf ~", "pytest $(evil)", "git -C /elsewhere push"):  # may name a path outside
        assert grant is None  # so no grant at all
    else:
        assert grant.kind == EXACT_COMMAND


def test_a_prefix_grant_never_covers_a_chained_command():
    grant = Grant(COMMAND, "pytest")
    assert covers(grant, "run_command", {"command": "pytest -x tests/test_a.py"})
    assert not covers(grant, "run_command", {"command": "pytest; rm -rf ~"})
    assert not covers(grant, "run_command", {"command": "pytestx"})
    assert not covers(Grant(COMMAND, "git status"), "run_command", {"command": "git push"})


def test_a_path_grant_covers_both_edit_tools_on_that_path_only():
    grant = grant_for("edit_file", {"path": "src/a.py"}, "src/a.py")
    assert grant == Grant(PATH, "src/a.py")
    assert covers(grant, "write_file", {"path": "src/a.py"}, "src/a.py")
    assert not covers(grant, "write_file", {"path": "src/b.py"}, "src/b.py")


def _asking(answers, asked):
    def approve(tool, args, preview):
        asked.append((tool.name, args))
        return answers.pop(0)

    return approve


def test_always_for_one_program_does_not_approve_another(server, workspace):
    asked = []
    server.add(
        call("run_command", {"command": "echo one"}),
        call("run_command", {"command": "echo two"}),
        call("run_command", {"command": "rm -f nothing"}),
        text("done"),
    )
    agent = make_agent(server, workspace, tools=[run_command], mode="ask", approve=_asking(["always", "no"], asked))
    agent.run_turn("go")
    assert [a["command"] for _, a in asked] == ["echo one", "rm -f nothing"]
    assert [g.describe() for g in agent.approvals.grants] == ["run_command echo …"]


def test_a_no_with_a_reason_reaches_the_model(server, workspace):
    server.add(call("run_command", {"command": "rm -rf build"}), text("ok"))
    agent = make_agent(
        server,
        workspace,
        tools=[run_command],
        mode="ask",
        approve=lambda t, a, p: Decision("no", "use make clean instead"),
    )
    agent.run_turn("clean up")
    result = next(m for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool")["content"]
    assert result.startswith("refused:") and "The user said: use make clean instead" in result


def test_edits_are_granted_by_path_and_revoked_or_reset(server, workspace):
    asked = []
    server.add(
        call("write_file", {"path": "a.txt", "content": "1"}),
        call("edit_file", {"path": "./a.txt", "old_text": "1", "new_text": "2"}),
        call("write_file", {"path": "b.txt", "content": "b"}),
        text("done"),
    )
    agent = make_agent(
        server, workspace, tools=[write_file, edit_file], mode="ask", approve=_asking(["always", "yes"], asked)
    )
    agent.run_turn("edit")
    assert [a["path"] for _, a in asked] == ["a.txt", "b.txt"] and (workspace / "a.txt").read_text() == "2"
    assert [g.scope for g in agent.approvals.grants] == ["a.txt"]
    agent.approvals.revoke(agent.approvals.grants[0])
    assert agent.approvals.grants == []
    agent.approvals.grant(Grant(PATH, "a.txt"))
    agent.reset()
    assert agent.approvals.grants == []
