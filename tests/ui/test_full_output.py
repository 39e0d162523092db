"""Output in full on demand, on an emulated screen: /show and Ctrl-O page a tool call's whole
output, Ctrl-O at an approval the whole diff, and a command Ctrl-C stopped keeps what it printed,
on the screen and for the model."""

import re

import pexpect
import pytest

from tests.support.scripted_server import call, text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]


def tool_results(server, request: int = -1) -> list[str]:
    return [m["content"] for m in server.chat_requests()[request]["messages"] if m["role"] == "tool"]


def test_show_prints_the_last_tool_calls_whole_output_and_show_n_counts_back(server, workspace, keep_screen):
    server.add(
        call("run_command", {"command": "seq 1 12"}),
        call("run_command", {"command": "echo second"}),
        text("done"),
    )
    term = Terminal(server, workspace, "--mode", "auto", rows=40)
    term.send("count\r")
    term.expect("done")
    term.ready()
    assert "  │ 12" in term.display() and "  │ 5" not in term.display()  # the screen shows the tail
    term.send("/show 2\r")
    term.expect("full output")
    term.ready()
    term.settle()
    keep_screen("/show", term)
    screen = term.display()
    at = next(i for i, line in enumerate(screen) if "── 2: run_command command=seq 1 12 · full output" in line)
    assert screen[at + 1 : at + 4] == ["  $ seq 1 12", "  exit code 0", "  [stdout]"]
    assert [line.strip() for line in screen[at + 4 : at + 16]] == [str(n) for n in range(1, 13)]
    term.send("/show\r")
    term.wait_screen("── 1: run_command command=echo second")
    term.send("/show list\r")
    term.expect("/show N pages")
    term.ready()
    assert "   2  run_command command=seq 1 12" in term.display()
    term.exit()


def test_ctrl_o_pages_a_long_output_through_the_pager_and_q_returns_to_the_prompt(server, workspace):
    server.add(call("run_command", {"command": "seq 1 300"}), text("counted"))
    term = Terminal(server, workspace, "--mode", "auto")
    term.send("count\r")
    term.expect("counted")
    term.ready()
    term.send("\x0f")  # Ctrl-O
    term.wait_screen("── 1: run_command command=seq 1 300 · full output")
    term.settle()  # less paints its screen line by line: the header comes before line 20
    assert any(line.strip() == "20" for line in term.display()) and not any(
        line.strip() == "300" for line in term.display()
    )
    term.send(">")  # less: to the end
    term.wait_screen("  300")
    term.send("q")
    term.ready()
    assert term.child.isalive()
    term.exit()


def test_show_without_any_call_says_so(server, workspace):
    term = Terminal(server, workspace)
    term.send("/show\r")
    term.expect("no tool output to show yet")
    term.ready()
    term.exit()


def test_an_interrupted_command_keeps_its_output_on_screen_and_for_the_model(server, workspace, monkeypatch):
    monkeypatch.setenv("NANOHERMES_PAGER", "cat")  # however many lines it printed, no pager to leave
    script = "for i in $(seq 1 200); do echo line $i; sleep 0.05; done"
    server.add(call("run_command", {"command": script}), text("I see it stopped at some line."))
    term = Terminal(server, workspace, "--mode", "auto")
    term.send("run it\r")
    term.wait_screen(
        re.compile(r"│ line ([3-9]|\d\d)")
    )  # line 3 or later (line 8 alone: gone when a loaded machine looked)
    term.child.sendintr()
    term.expect("interrupted")
    term.ready()
    screen = term.display()
    line = next(line for line in screen if "run_command command=for i in" in line)
    assert line.startswith("✗ ") and "· interrupted ·" in line
    assert any(line.startswith("  │ line ") for line in screen)  # what it printed is still there
    term.send("what happened?\r")
    term.expect("stopped at some line")
    term.ready()
    result = tool_results(server)[0]
    assert "interrupted by the user after" in result and "line 1\nline 2\n" in result
    term.send("/show\r")
    term.expect("full output")
    term.ready()
    assert "  line 3" in term.scrollback()
    term.exit()


def test_ctrl_o_at_an_approval_pages_the_whole_new_file_then_asks_again(server, workspace):
    content = "".join(f"row {i}\n" for i in range(1, 180))
    server.add(call("write_file", {"path": "big.txt", "content": content}), text("written"))
    term = Terminal(server, workspace, "--mode", "ask")
    term.send("write it\r")
    term.expect("139 more lines")
    term.expect("Ctrl-O shows the whole of it")
    term.expect("allow")
    term.send("\x0f")
    term.wait_screen("+row 30")
    term.send(">")
    term.wait_screen("+row 179")
    term.send("q")
    term.expect("allow")
    term.send("y\r")
    term.expect("written")
    term.ready()
    assert (workspace / "big.txt").read_text() == content
    term.exit()


def test_ctrl_o_at_the_prompt_keeps_the_line_being_typed(server, workspace):
    server.add(call("run_command", {"command": "echo hi"}), text("ok"))
    term = Terminal(server, workspace, "--mode", "auto")
    term.send("go\r")
    term.expect("ok")
    term.ready()
    term.send("half a thought")
    term.wait_screen("› half a thought")
    term.send("\x0f")
    term.expect("full output")
    term.ready()
    assert "auto › half a thought" in term.display()
    term.send("\x15")
    term.child.sendeof()
    term.child.expect(pexpect.EOF)
