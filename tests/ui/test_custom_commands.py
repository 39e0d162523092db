"""Command files in the REPL, on an emulated screen: listed by /help and the completion menu with
their descriptions, run with their arguments, their `!` line asked about as a model's command is."""

import pytest

from tests.support.scripted_server import text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

REVIEW = """---
description: Review a file for bugs
argument-hint: [file]
---
Review @$1 for bugs.
!touch reviewed.txt && echo marked
"""


def users_messages(server) -> list[str]:
    return [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "user"]


def test_command_files_in_help_and_the_menu_run_with_arguments_and_their_bang_line_asks(
    server, workspace, isolated_home, keep_screen
):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (workspace / ".nanohermes" / "commands").mkdir(parents=True)
    (workspace / ".nanohermes" / "commands" / "review.md").write_text(REVIEW)
    (isolated_home / "codex-home" / "prompts").mkdir(parents=True)
    (isolated_home / "codex-home" / "prompts" / "draft.md").write_text("---\ndescription: draft a PR\n---\nDraft")
    (workspace / ".nanohermes" / "commands" / "exit.md").write_text("never run")
    server.add(text("add subtracts."))
    term = Terminal(server, workspace, "--mode", "ask", "--sandbox", "off", rows=40)  # unconfined commands ask
    assert any("is a built-in command, which a file never replaces" in line for line in term.scrollback())
    term.send("/help\r")
    term.expect("Ctrl-D")
    term.ready()
    shown = term.scrollback()
    header = shown.index("commands from files:")
    assert any(line.split() == ["/prompts:draft", "draft", "a", "PR"] for line in shown[header:])
    assert any(line.split()[:3] == ["/review", "[file]", "Review"] for line in shown[header:])
    term.send("/rev")
    term.wait_screen("[file] — Review a file for bugs")  # the menu, as you type
    term.send("\t")
    term.wait_screen("› /review")
    term.send(" calc.py\r")
    term.expect("the prompt of .nanohermes/commands/review.md")
    term.expect("allow")  # the file's `!` line asks, as a model's unconfined command does
    term.settle()
    keep_screen("a command file's ! line asks", term)
    assert not (workspace / "reviewed.txt").exists()
    term.send("y\r")
    term.expect("add subtracts")
    term.ready()
    assert (workspace / "reviewed.txt").exists()
    sent = users_messages(server)[-1]
    assert sent.startswith("Review @calc.py for bugs.\n$ touch reviewed.txt && echo marked\nexit code 0")
    assert "return a - b" in sent  # @calc.py attached
    assert term.exit() == 0
