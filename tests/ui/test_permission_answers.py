"""The approval question's answers in a real pty: "always" lasts for the project (after -c and a
restart), "session" does not, an "always" never widens (the `rm` case of issue 23), and
/permissions lists and revokes what is in force."""

import pytest

from tests.support.scripted_server import call, text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]


def answer_turn(term: Terminal, *questions: tuple[str, str]) -> None:
    """Send a request and answer each question (a pattern of its scope, the answer) when it is
    on the screen; wait for the turn to end."""
    term.send("go\r")
    for scope, answer in questions:
        term.expect(scope)
        term.send(f"{answer}\r")
    term.expect("session ")
    term.ready()


def streamed(server) -> int:
    return len([r for r in server.chat_requests() if r.get("stream")])


def test_always_for_rm_build_does_not_cover_rm_of_a_folder_outside_and_a_no_keeps_it(server, workspace, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    (workspace / "build").mkdir()
    server.add(
        call("run_command", {"command": "rm -rf build"}),
        call("run_command", {"command": "rm -rf ../victim"}),
        text("done"),
    )
    term = Terminal(server, workspace, "--mode", "ask", "--sandbox", "off")  # unconfined commands ask
    term.send("clean up\r")
    term.expect(r"\[a\]lways: run_command exactly: rm -rf build")
    term.send("a\r")
    term.expect(r"\$ rm -rf \.\./victim")  # asked, and only yes or no: nothing may last for it
    term.expect(r"allow\? \[y\]es · \[n\]o")
    term.send("n\r")
    term.expect("session ")
    term.ready()
    assert not (workspace / "build").exists() and (victim / "keep.txt").read_text() == "precious"
    term.exit()


def test_always_lasts_for_the_project_after_continue_and_a_restart_and_session_only_does_not(server, workspace):
    server.add(
        call("write_file", {"path": "a.txt", "content": "1"}),
        call("write_file", {"path": "b.txt", "content": "1"}),
        call("write_file", {"path": "b.txt", "content": "2"}),  # the session answer covers it
        text("done"),
    )
    term = Terminal(server, workspace, "--mode", "ask")
    answer_turn(term, (r"edit_file on a\.txt ·", "a"), (r"edit_file on b\.txt ·", "s"))
    assert streamed(server) == 4 and (workspace / "b.txt").read_text() == "2"
    term.exit()

    for args in (["-c"], []):  # the same session continued, then a new one
        server.add(
            call("write_file", {"path": "a.txt", "content": "again"}),
            call("write_file", {"path": "b.txt", "content": "again"}),
            text("done"),
        )
        term = Terminal(server, workspace, "--mode", "ask", *args)
        term.send("go\r")
        term.expect(r"allow\? \[y\]es · \[s\]ession · \[a\]lways: write_file and edit_file on b\.txt")
        term.send("n\r")  # a.txt was written unasked; b.txt's answer was for that session only
        term.expect("session ")
        term.ready()
        assert (workspace / "a.txt").read_text() == "again" and (workspace / "b.txt").read_text() == "2"
        term.exit()


def test_permissions_lists_rules_and_answers_with_their_sources_and_revokes_a_saved_one(
    server, workspace, isolated_home
):
    (isolated_home / "config.toml").write_text('[permissions]\nallow = ["run_command:pytest *"]\n')
    (workspace / ".nanohermes").mkdir()
    (workspace / ".nanohermes" / "config.toml").write_text('[permissions]\ndeny = ["run_command:git push *"]\n')
    server.add(call("write_file", {"path": "a.txt", "content": "1"}), text("done"))
    term = Terminal(server, workspace, "--mode", "ask", "--deny", "web_fetch")
    answer_turn(term, (r"edit_file on a\.txt ·", "a"))
    term.send("/permissions\r")
    term.expect("revoke N")
    term.ready()
    rows = [line.split() for line in term.display()]
    assert ["allow", "run_command:pytest", "*", "config.toml"] in rows
    assert ["deny", "run_command:git", "push", "*", "the", "project's", ".nanohermes/config.toml"] in rows
    assert ["deny", "web_fetch", "the", "command", "line"] in rows
    shown = "\n".join(term.display())
    assert (
        "saved for this project (every session here, until revoked):\n  1. write_file and edit_file on a.txt" in shown
    )
    term.send("/permissions revoke 1\r")
    term.expect("revoked: write_file and edit_file on a.txt")
    term.ready()
    term.exit()
    server.add(call("write_file", {"path": "a.txt", "content": "2"}), text("done"))
    term = Terminal(server, workspace, "--mode", "ask")
    term.send("go\r")
    term.expect(r"\[a\]lways: write_file and edit_file on a\.txt")  # revoked: it asks again
    term.send("n\r")
    term.expect("session ")
    term.ready()
    term.exit()
