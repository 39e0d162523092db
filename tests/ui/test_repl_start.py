"""The REPL's start in a real pseudo-terminal (ui/repl_start.py): a new session's first prompt is
drawn before the session is built, its start lines come above it, a line typed at once waits for
it, and a session that cannot be built ends the prompt with one line, no traceback."""

from __future__ import annotations

import os
import re

import pexpect
import pytest

from tests.support.scripted_server import text
from tests.support.terminal import BIN, Child, Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

SESSION_LINE = r"session \S+ \(new\)"


def test_a_new_sessions_first_prompt_is_drawn_before_its_start_lines_which_come_above_it(server, workspace):
    term = Terminal(server, workspace, wait_ready=False)
    term.child.expect("›")
    assert not re.search(SESSION_LINE, term.child.before)  # the prompt first: nothing of the session yet
    term.child.expect(SESSION_LINE)
    term.ready()
    screen = term.display()
    assert screen[0].startswith("NanoHermes · ") and any(re.search(SESSION_LINE, line) for line in screen)
    prompt_row = next(i for i, line in enumerate(screen) if line.startswith("›"))
    assert prompt_row > next(i for i, line in enumerate(screen) if re.search(SESSION_LINE, line))
    assert term.exit() == 0


def test_a_line_sent_at_the_first_prompt_waits_for_the_session_and_is_answered(server, workspace):
    server.add(text("answered at once"))
    term = Terminal(server, workspace, wait_ready=False)
    term.ready()  # the first prompt, the session perhaps not built yet
    term.send("hi\r")
    term.expect("answered at once")
    term.ready()
    assert [r["messages"][-1]["content"] for r in server.chat_requests()] == ["hi"]
    assert any(re.search(SESSION_LINE, line) for line in term.scrollback())
    assert term.exit() == 0


def test_a_session_that_cannot_be_built_ends_the_first_prompt_with_one_line(server, workspace, isolated_home):
    (isolated_home / "sessions").write_text("a file where the sessions directory goes")
    env = {**os.environ, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = Child(BIN, ["--base-url", server.url], cwd=str(workspace), env=env, encoding="utf-8", timeout=40)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert "Cannot use the state directory" in child.before and "Traceback" not in child.before
