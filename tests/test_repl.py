"""The REPL in a real pseudo-terminal."""

import os
import sys

import pexpect
import pytest
from scripted_server import Reply, call, text

BIN = os.path.join(os.path.dirname(sys.executable), "nanohermes")


def spawn(server, workspace, *args):
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100", "LINES": "40"}
    child = pexpect.spawn(BIN, ["--base-url", server.url, *args], cwd=str(workspace), env=env,
                          encoding="utf-8", timeout=20, dimensions=(40, 100))
    child.expect("› ")
    return child


def test_a_turn_then_exit(server, workspace):
    server.add(text("Hello from **the model**."))
    child = spawn(server, workspace, "--session", "t1")
    child.sendline("hi there")
    child.expect("Hello from")
    child.expect("tokens this turn")
    child.expect("› ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    assert child.wait() == 0


def test_ctrl_c_mid_answer_stops_the_turn_and_returns_to_the_prompt(server, workspace):
    server.add(Reply(content="word " * 400, delay=0.05, chunk_size=5), text("second answer"))
    child = spawn(server, workspace)
    child.sendline("talk a lot")
    child.expect("word")
    child.sendintr()
    child.expect("interrupted")
    child.expect("› ")
    child.sendline("again")
    child.expect("second answer")
    child.expect("› ")
    sent = server.chat_requests()[1]["messages"]
    assert sent[2]["role"] == "assistant" and sent[2]["content"].endswith("[interrupted by user]")
    child.sendeof()
    child.expect(pexpect.EOF)


def test_slash_commands_help_session_reset(server, workspace):
    server.add(text("one"), text("two"))
    child = spawn(server, workspace, "--session", "cmds")
    child.sendline("/help")
    child.expect("/reset")
    child.expect("› ")
    child.sendline("/session")
    child.expect("cmds.jsonl")
    child.expect("› ")
    child.sendline("first")
    child.expect("one")
    child.expect("› ")
    child.sendline("/reset")
    child.expect("conversation reset")
    child.expect("› ")
    child.sendline("second")
    child.expect("two")
    child.expect("› ")
    assert [m["role"] for m in server.chat_requests()[1]["messages"]] == ["system", "user"]
    child.sendline("/exit")
    child.expect(pexpect.EOF)


def test_tab_completes_slash_commands(server, workspace):
    child = spawn(server, workspace)
    child.send("/ses\t")
    child.expect("/session")
    child.send("\r")
    child.expect("path")
    child.sendline("/exit")
    child.expect(pexpect.EOF)


def test_ctrl_c_at_the_prompt_clears_the_line(server, workspace):
    server.add(text("fresh"))
    child = spawn(server, workspace)
    child.send("half typed")
    child.sendintr()
    child.sendline("new line")
    child.expect("fresh")
    assert server.chat_requests()[0]["messages"][-1]["content"] == "new line"
    child.sendline("/exit")
    child.expect(pexpect.EOF)


def test_approval_prompt_in_ask_mode(server, workspace):
    server.add(call("write_file", {"path": "a.txt", "content": "hello\n"}), text("written"))
    child = spawn(server, workspace, "--mode", "ask")
    child.sendline("write it")
    child.expect("allow\\?")
    child.sendline("y")
    child.expect("written")
    child.expect("› ")
    assert (workspace / "a.txt").read_text() == "hello\n"
    child.sendline("/exit")
    child.expect(pexpect.EOF)
