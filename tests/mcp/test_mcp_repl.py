"""MCP in the REPL, in a real pty: a server's prompts as slash commands, and a server's question
(elicitation) asked field by field, against the rich SDK server over stdio."""

import pytest

from tests.support.mcp_servers import demo_settings, toml_for
from tests.support.scripted_server import call, text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]


def test_prompts_run_as_slash_commands_and_a_servers_form_is_asked_at_the_terminal(server, workspace, isolated_home):
    (isolated_home / "config.toml").write_text(toml_for(demo_settings("rich", "--rich", trusted=True)))
    server.add(text("reviewed"), call("mcp", {"name": "rich.book"}), text("booked"))
    server.add(call("mcp", {"name": "rich.book"}), text("not booked"))
    term = Terminal(server, workspace)
    term.send("/mcp\r")
    term.expect(r"/mcp:rich:review path=… \[focus=…\] — Review a file.")
    term.ready()
    term.send("/mcp:rich:review\r")
    term.expect("needs path: /mcp:rich:review path=… focus=…")
    term.ready()
    term.send("/rich:review a.py\r")  # the spelling -p and an editor use
    term.expect("reviewed")
    term.ready()
    assert server.chat_requests()[0]["messages"][-1]["content"].startswith("Please review a.py, looking for bugs.")
    term.send("book it\r")
    term.expect("MCP server rich asks: Which meeting should I book?")
    term.expect(r"title \(text, required\) ›")
    term.send("standup\r")
    term.expect(r"minutes \(a whole number, required: how long\) ›")
    term.send("soon\r")
    term.expect("minutes: a whole number")
    term.send("15\r")
    term.expect(r"remote \(yes or no, default False\) ›")
    term.send("y\r")
    term.expect("booked")
    term.ready()
    result = [m for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert result == "mcp rich.book:\naccept: {'title': 'standup', 'minutes': 15, 'remote': True}"
    term.send("book another\r")
    term.expect(r"title \(text, required\) ›")
    term.send("\x1b")  # Esc cancels the form; the turn goes on
    term.expect("not booked")
    term.ready()
    result = [m for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert result == "mcp rich.book:\ncancel: None"
    term.exit()
