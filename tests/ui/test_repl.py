"""The REPL in a real pseudo-terminal."""

import os
import sys

import pexpect
import pytest

from tests.support.scripted_server import Reply, call, prose, text
from tests.support.terminal import Child, Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

BIN = os.path.join(os.path.dirname(sys.executable), "nanohermes")


def spawn(server, workspace, *args, wait: bool = True):
    # No cursor-position request: pexpect does not answer it, and keys typed while
    # prompt_toolkit waits for the answer would be misread.
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100", "LINES": "40", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = Child(
        BIN,
        ["--base-url", server.url, *args],
        cwd=str(workspace),
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(40, 100),
    )
    if wait:
        ready(child)
    return child  # Enter is "\r" in a terminal; "\n" (Ctrl-J) inserts a newline


def ready(child):
    """Wait for the prompt to be drawn and the cursor shown again."""
    child.expect("›")
    child.expect(r"\x1b\[\?25h")


def test_a_turn_then_exit(server, workspace):
    server.add(text("Hello from **the model**."))
    child = spawn(server, workspace, "--session", "t1")
    child.send("hi there\r")
    child.expect("Hello from")
    child.expect("100 in · 10 out · 1 request")
    child.expect("›")
    child.send("/exit\r")
    child.expect(pexpect.EOF)
    assert child.wait() == 0


def test_ctrl_c_mid_answer_stops_the_turn_and_returns_to_the_prompt(server, workspace):
    server.add(Reply(content=prose(2_000), delay=0.05, chunk_size=5), text("second answer"))
    child = spawn(server, workspace)
    child.send("talk a lot\r")
    child.expect("word")
    child.sendintr()
    child.expect("interrupted")
    child.expect("›")
    child.send("again\r")
    child.expect("second answer")
    child.expect("›")
    sent = server.chat_requests()[1]["messages"]
    assert sent[2]["role"] == "assistant" and sent[2]["content"].endswith("[interrupted by user]")
    child.sendeof()
    child.expect(pexpect.EOF)


def test_slash_commands_help_session_reset(server, workspace):
    server.add(text("one"), text("two"))
    child = spawn(server, workspace, "--session", "cmds")
    child.send("/help\r")
    child.expect("/reset")
    child.expect("›")
    child.send("/session\r")
    child.expect("cmds.jsonl")
    child.expect("›")
    child.send("first\r")
    child.expect("one")
    child.expect("›")
    child.send("/reset\r")
    child.expect("conversation reset")
    child.expect("›")
    child.send("second\r")
    child.expect("two")
    child.expect("›")
    assert [m["role"] for m in server.chat_requests()[1]["messages"]] == ["system", "user"]
    child.send("/exit\r")
    child.expect(pexpect.EOF)


def test_tab_completes_slash_commands(server, workspace):
    term = Terminal(server, workspace)
    term.send("/ses\t")
    term.wait_screen("› /session")  # on the screen: the completion may be drawn in pieces
    term.send("\r")
    term.expect("path")
    term.ready()
    assert term.exit() == 0


def test_ctrl_c_at_the_prompt_clears_the_line(server, workspace):
    server.add(text("fresh"))
    child = spawn(server, workspace)
    child.send("half typed")
    child.expect("half typed")
    child.sendintr()
    ready(child)
    child.send("new line\r")
    child.expect("fresh")
    ready(child)
    assert server.chat_requests()[0]["messages"][-1]["content"] == "new line"
    child.send("/exit\r")
    child.expect(pexpect.EOF)


def test_lines_typed_before_the_prompt_is_drawn_are_sent_in_order(server, workspace):
    # Typed while the REPL starts (as between prompts), the terminal is still in its cooked mode,
    # which turns Enter into a newline: those lines were once newlines inside one unsent prompt.
    server.add(text("first seen"), text("second seen"), text("third seen"))
    child = spawn(server, workspace, wait=False)
    child.send("early bird\rsecond line\rhalf")
    child.expect("second seen")
    ready(child)
    child.send(" typed\r")  # what was typed without Enter starts the prompt
    child.expect("third seen")
    ready(child)
    said = [r["messages"][-1]["content"] for r in server.chat_requests()]
    assert said == ["early bird", "second line", "half typed"]
    child.send("/exit\r")
    child.expect(pexpect.EOF)


def test_approval_prompt_in_ask_mode(server, workspace):
    server.add(call("write_file", {"path": "a.txt", "content": "hello\n"}), text("written"))
    child = spawn(server, workspace, "--mode", "ask")
    child.send("write it\r")
    child.expect("allow\\?")
    child.send("y\r")
    child.expect("written")
    child.expect("›")
    assert (workspace / "a.txt").read_text() == "hello\n"
    child.send("/exit\r")
    child.expect(pexpect.EOF)
