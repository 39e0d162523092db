"""Display errors a new user met (issue 47), each in a real pty played into pyte: /fork's recap
after a rewind, one message count for a session, an inline !`command` mid-sentence, the
"always" scope whole, a dead attempt's last line after the retry notice, remember's line."""

from __future__ import annotations

import json
import re

import pytest

from nanohermes.storage.session import Session
from tests.support.scripted_server import Error, Reply, call, text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

LONG_PATH = "src/components/navigation/sidebar/collapsible_section_header.py"


def screen_text(term: Terminal) -> str:
    return "\n".join(term.scrollback())


def test_fork_after_a_rewind_recaps_the_models_last_answer_not_the_loops_ack(server, workspace):
    server.add(text("The first real answer."), text("The second answer."))
    term = Terminal(server, workspace, "--session", "orig")
    for question, answer in (("first question", "first real answer"), ("second question", "second answer")):
        term.send(question + "\r")
        term.expect(answer)
        term.ready()
    term.send("/rewind 1 chat\r")
    term.ready()
    term.send("/fork\r")
    term.wait_screen("forked from orig")
    recap = [line for line in term.scrollback() if "last answer:" in line]
    assert recap[-1].strip() == "last answer: The first real answer."
    assert "Understood." not in screen_text(term)
    assert term.exit() == 0


def test_the_session_list_and_the_resume_banner_give_one_count(server, workspace, isolated_home):
    old = Session(isolated_home, "old-chat", workspace=workspace)
    talk = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"} for i in range(8)]
    for message in talk:
        old.record_message(message)
    summary = [
        {"role": "user", "content": "[summary] the talk so far"},
        {"role": "assistant", "content": "Understood."},
    ]
    old.record_compaction(talk, summary + talk[-2:], {"layers": ["summary"]})  # 4 in the working set
    old.close()
    term = Terminal(server, workspace)
    term.send("/resume\r")
    term.wait_screen("old-chat")
    (row,) = [line for line in term.display() if "old-chat" in line]
    listed = int(re.search(r"old-chat\s+(\d+)\s", row).group(1))
    term.send("1\r")
    term.wait_screen("session old-chat (resumed")
    assert f"session old-chat (resumed, {listed} messages)" in screen_text(term) and listed == 8
    assert term.exit() == 0


def test_an_inline_command_in_a_command_file_gives_its_output_alone_mid_sentence(server, workspace):
    (workspace / ".nanohermes" / "commands").mkdir(parents=True)
    (workspace / ".nanohermes" / "commands" / "branch.md").write_text("We are on !`echo feature-x` today.\n")
    server.add(text("Noted."))
    term = Terminal(server, workspace)
    term.send("/branch\r")
    term.expect("Noted.")
    term.ready()
    assert server.chat_requests()[-1]["messages"][-1]["content"].startswith("We are on feature-x today.")
    assert term.exit() == 0


def test_the_always_scope_of_a_long_path_is_whole_never_cut_mid_word(server, workspace):
    server.add(call("write_file", {"path": LONG_PATH, "content": "x = 1\n"}), text("Written."))
    term = Terminal(server, workspace, "--mode", "ask", cols=100)
    term.send("write it\r")
    term.expect("allow\\?")
    term.settle()
    question = " ".join(line.strip() for line in term.display() if line.strip())
    assert f"[a]lways: write_file and edit_file on {LONG_PATH} · [n]o" in question
    term.send("n\r")
    term.expect("Written.")
    term.ready()
    assert term.exit() == 0


def test_a_dead_attempts_unfinished_line_is_not_printed_after_the_retry_notice(server, workspace):
    content = "The first line of the reply.\nAnd an unfinished second li"
    server.add(
        Reply(content=content, chunk_size=8, drop_after=1 + -(-len(content) // 8)),  # all the text, then cut
        Error(400, {"error": {"message": "the retry is refused"}}),
    )
    term = Terminal(server, workspace)
    term.send("hi\r")
    term.wait_screen("the retry is refused")
    term.prompt_shown()
    lines = term.scrollback()
    notice = next(i for i, line in enumerate(lines) if "retry 1/" in line)
    assert not any("unfinished second li" in line for line in lines[notice:])
    assert term.exit() == 0


def test_remembers_line_names_its_kind_and_text_not_raw_json(server, workspace):
    arguments = {"text": "The user installs packages with uv", "kind": "preference"}
    server.add(call("remember", arguments), text("I will remember that."))
    term = Terminal(server, workspace, "--mode", "auto")
    term.send("remember that I use uv\r")
    term.expect("I will remember that.")
    term.ready()
    (line,) = [line for line in term.scrollback() if line.startswith("✓ remember")]
    assert "remember kind=preference text=The user installs packages with uv" in line
    assert json.dumps(arguments)[:10] not in line and "{" not in line
    assert term.exit() == 0
