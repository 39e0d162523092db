"""The keyboard while a turn runs, and approvals that fit, in a real pty."""

import time

import pytest

from tests.support.scripted_server import Reply, call, prose, text
from tests.support.terminal import Terminal
from tests.support.timing import HANG_GUARD_S

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]


def test_esc_stops_a_running_turn_as_ctrl_c_does(server, workspace):
    server.add(Reply(content=prose(2_000), delay=0.05, chunk_size=5), text("second answer"))
    term = Terminal(server, workspace)
    term.send("talk a lot\r")
    term.expect("word")
    term.send("\x1b")
    term.expect("interrupted")
    term.expect("session ")
    term.ready()
    term.send("again\r")
    term.expect("second answer")
    term.ready()
    sent = server.chat_requests()[1]["messages"]
    assert sent[2]["role"] == "assistant" and sent[2]["content"].endswith("[interrupted by user]")
    term.exit()


def test_arrow_keys_while_a_turn_runs_do_not_stop_it(server, workspace):
    server.add(Reply(content=prose(140, "steady"), delay=0.03, chunk_size=5))
    term = Terminal(server, workspace)
    term.send("go\r")
    term.expect("steady")
    term.send("\x1b[A\x1b[B")
    term.expect("session ")
    term.ready()
    assert not any("interrupted" in line for line in term.display())
    term.exit()


def test_keys_typed_while_the_agent_works_are_kept_for_the_next_prompt_not_the_approval(server, workspace):
    content = "hello world\n" * 8  # its arguments stream for about 3 s: the turn runs until then at least
    server.add(
        call("write_file", {"path": "a.txt", "content": content}, content="Writing it now.", delay=0.15, chunk_size=6),
        text("written"),
    )
    term = Terminal(server, workspace, "--mode", "ask")
    term.send("write a.txt\r")
    deadline = time.monotonic() + HANG_GUARD_S
    while not server.chat_requests() and time.monotonic() < deadline:  # the turn is on: the keys go to it
        term.pump(0.05)  # (a loaded machine drew "Writing it now." only as the stream ended, at the question)
    term.send("no thanks")  # typed ahead, while the model still streams
    term.expect("allow")
    term.settle()
    assert not any("no thanks" in line for line in term.display())
    term.send("y\r")
    term.expect("session ")
    term.ready()
    assert (workspace / "a.txt").read_text() == content
    assert "› no thanks" in term.display()  # the next prompt starts with what was typed
    term.send("\x15")  # Ctrl-U clears it
    term.exit()


def test_a_session_answer_is_scoped_to_the_command_prefix_listed_and_cleared_by_reset(server, workspace):
    server.add(
        call("run_command", {"command": "echo one"}),
        call("run_command", {"command": "echo two"}),
        call("run_command", {"command": "ls"}),
        text("done"),
    )
    term = Terminal(server, workspace, "--mode", "ask", "--sandbox", "off")  # unconfined commands ask
    term.send("go\r")
    term.expect(r"\[s\]ession · \[a\]lways: run_command echo …")
    term.send("s\r")
    term.expect(r"\[a\]lways: run_command ls …")  # echo two ran without a question; ls asks
    term.send("y\r")
    term.expect("session ")
    term.ready()
    assert len([r for r in server.chat_requests() if r.get("stream")]) == 4
    term.send("/permissions\r")
    term.expect("revoke N")
    term.ready()
    assert "this session only (until /reset):" in term.display() and "  1. run_command echo …" in term.display()
    term.send("/reset\r")
    term.expect("answers cleared")
    term.ready()
    term.send("/permissions\r")
    term.expect('no "always" answers')
    term.ready()
    term.exit()


def test_esc_at_an_approval_question_stops_the_turn(server, workspace):
    server.add(call("run_command", {"command": "echo hi"}), text("after"))
    term = Terminal(server, workspace, "--mode", "ask", "--sandbox", "off")  # unconfined commands ask
    term.send("go\r")
    term.expect("allow")
    term.send("\x1b")
    term.expect("interrupted")
    term.expect("session ")
    term.ready()
    assert len(server.chat_requests()) == 1  # the turn ended; the model was not asked again
    term.exit()
