"""The REPL in a real pseudo-terminal: resuming (/resume, -c, the recap, the words on leaving),
switching (Shift-Tab, /model with Tab completion) and the start-up endpoint check."""

from __future__ import annotations

import os
import sys

import pexpect
import pytest

from nanohermes.storage.session import Session
from tests.support import raw_servers as raw
from tests.support.scripted_server import text
from tests.support.terminal import Child, Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

BIN = os.path.join(os.path.dirname(sys.executable), "nanohermes")
SHIFT_TAB = "\x1b[Z"


def spawn(url: str, workspace, *args, banner: str | None = None):
    """Start the REPL; wait for `banner` (a regex) in what it prints first, then for the prompt."""
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "160", "LINES": "40", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = Child(
        BIN, ["--base-url", url, *args], cwd=str(workspace), env=env, encoding="utf-8", timeout=20, dimensions=(40, 160)
    )
    if banner:
        child.expect(banner)
    ready(child)
    return child


def ready(child):
    child.expect("›")
    child.expect(r"\x1b\[\?25h")


def leave(child):
    child.send("/exit\r")
    child.expect(pexpect.EOF)
    return child.before


def saved_session(home, workspace, name: str, request: str, answer: str) -> None:
    with Session(home, name, workspace=workspace) as s:
        s.record_message({"role": "user", "content": request})
        s.record_message({"role": "assistant", "content": answer})


def test_leaving_prints_the_command_that_resumes(server, workspace):
    server.add(text("hello back"))
    child = spawn(server.url, workspace, "--session", "bye")
    child.send("hello\r")
    child.expect("hello back")
    ready(child)
    assert "session bye saved · resume with: nanohermes --session bye (or nanohermes -c)" in leave(child)


def test_leaving_a_session_without_a_word_leaves_no_file(server, workspace, isolated_home):
    child = spawn(server.url, workspace)
    assert "was empty; nothing saved" in leave(child)
    assert not list((isolated_home / "sessions").glob("*.jsonl"))


def test_resume_picks_a_session_from_a_list_and_recaps_it(server, workspace, isolated_home):
    saved_session(isolated_home, workspace, "older", "rename the module", "Renamed it to parser.py.")
    server.add(text("continuing"))
    child = spawn(server.url, workspace)
    child.send("/resume\r")
    child.expect("1. older")
    child.expect("resume which")
    child.send("1\r")
    child.expect("session older \\(resumed, 2 messages\\)")
    child.expect("last request: rename the module")
    child.expect("last answer: Renamed it to parser.py.")
    ready(child)
    child.send("and now?\r")
    child.expect("continuing")
    ready(child)
    sent = [m["content"] for m in server.chat_requests()[0]["messages"][1:]]
    assert sent == ["rename the module", "Renamed it to parser.py.", "and now?"]
    leave(child)


def test_continue_starts_the_repl_in_the_latest_session_with_a_recap(server, workspace, isolated_home):
    saved_session(isolated_home, workspace, "yesterday", "add a --verbose flag", "Added it in cli.py.")
    child = spawn(
        server.url,
        workspace,
        "-c",
        banner=r"session yesterday \(resumed, 2 messages\)[\s\S]*last request: add a --verbose flag",
    )
    leave(child)


def test_shift_tab_cycles_the_mode_for_the_next_request(server, workspace):
    server.add(text("a plan"))
    child = spawn(server.url, workspace)
    child.send(SHIFT_TAB)
    child.expect("plan ›")
    child.send("what would you change?\r")
    child.expect("a plan")
    child.expect("approve the plan and go on")
    child.send("\r")  # keep planning
    ready(child)
    request = server.chat_requests()[0]
    assert "Mode: plan." in request["messages"][0]["content"]
    assert "write_file" not in [t["function"]["name"] for t in request["tools"]]
    child.send(SHIFT_TAB)
    child.expect("accept-edits")  # the prompt is redrawn in place: only the changed word is written
    child.send(SHIFT_TAB)
    child.expect("uto ›")  # "accept-edits" becomes "auto": the shared "a" is not written again
    leave(child)


def test_an_approved_plan_goes_on_in_the_mode_chosen(server, workspace):
    server.add(text("1. change a\n2. test it"), text("carried out"))
    child = spawn(server.url, workspace, "--mode", "plan")
    child.send("plan the change\r")
    child.expect("approve the plan and go on")
    child.send("e\r")
    child.expect("carried out")
    ready(child)
    second = server.chat_requests()[1]
    assert "Mode: accept-edits." in second["messages"][0]["content"]
    assert second["messages"][-1]["content"].startswith("The plan is approved: carry it out.")
    assert "write_file" in [t["function"]["name"] for t in second["tools"]]
    leave(child)


def test_model_tab_completes_the_names_the_server_lists(server, workspace):
    server.add(text("from the new model"))
    term = Terminal(server, workspace, "--model", "other", cols=160)
    term.send("/model te")
    term.wait_screen("test-model")  # the menu as you type: the server's list is in (a Tab waits 3 s at most)
    term.send("\t")
    term.wait_screen("› /model test-model")
    term.send("\r")
    term.expect("model test-model from the next request")
    term.ready()
    term.send("hi\r")
    term.expect("from the new model")
    term.ready()
    assert server.chat_requests()[0]["model"] == "test-model"
    assert term.exit() == 0


def test_the_banner_says_when_the_endpoint_is_unreachable(workspace):
    url = raw.closed_port_url()
    child = spawn(url, workspace, banner=r"endpoint check: Cannot reach \S+ \(Connection refused\)")
    leave(child)


def test_the_banner_says_when_the_endpoint_is_a_web_page(workspace):
    page = raw.RawServer(raw.html_page())
    try:
        child = spawn(page.url, workspace, banner=r"endpoint check: .*an HTML page \(text/html\): 'Welcome to nginx!'")
        leave(child)
    finally:
        page.close()
