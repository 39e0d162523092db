"""What a user reads before the first prompt: one short line for the sandbox (what runs unasked and
how to take it back), a repository's warning once per cause, the prompt within 4 lines at 60
columns; the details on /sandbox. A real pty, read on an emulated screen."""

from __future__ import annotations

import pytest

from tests.support.cli import run_cli
from tests.support.scripted_server import text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

IGNORED_ALLOW = "a repository cannot grant itself anything"


def _repository_with_an_allow_rule(workspace, rule: str = "run_command:rm *") -> None:
    (workspace / ".nanohermes").mkdir(exist_ok=True)
    (workspace / ".nanohermes" / "config.toml").write_text(f'[permissions]\nallow = ["{rule}"]\n')


def _lines_before_the_prompt(term: Terminal) -> list[str]:
    term.settle()
    screen = [line.rstrip() for line in term.display()]
    return screen[: next(i for i, line in enumerate(screen) if line.startswith("›")) + 1]


def test_at_60_columns_the_first_prompt_comes_within_4_lines_once_a_warning_was_seen(server, workspace):
    _repository_with_an_allow_rule(workspace)
    first = Terminal(server, workspace, cols=60)
    shown = _lines_before_the_prompt(first)
    first.exit()
    assert IGNORED_ALLOW in " ".join(shown)  # said the first time (wrapped at 60 columns)
    again = Terminal(server, workspace, cols=60)
    shown = _lines_before_the_prompt(again)
    again.exit()
    assert len(shown) <= 4, shown
    assert shown[1] == "· commands run unasked in the sandbox · /rewind undoes them"
    assert "grant itself" not in " ".join(shown)


def test_a_changed_cause_is_said_again(server, workspace):
    _repository_with_an_allow_rule(workspace)
    server.add(text("one"), text("two"), text("three"))
    assert IGNORED_ALLOW in run_cli(["-p", "hi", "--base-url", server.url], workspace).stderr
    assert IGNORED_ALLOW not in run_cli(["-p", "hi", "--base-url", server.url], workspace).stderr
    _repository_with_an_allow_rule(workspace, "write_file:*")
    assert IGNORED_ALLOW in run_cli(["-p", "hi", "--base-url", server.url], workspace).stderr


def test_wide_terminals_name_the_sandbox_and_slash_sandbox_says_it_all(server, workspace):
    term = Terminal(server, workspace, cols=140)
    shown = _lines_before_the_prompt(term)
    assert shown[1].startswith("· commands run unasked in the sandbox (")
    assert shown[1].endswith("network off) · /rewind undoes them · /sandbox")
    term.send("/sandbox\r")
    term.wait_screen("the model's commands run in it without asking")
    assert any("read-only: .git, .nanohermes, .claude" in line for line in term.scrollback() + term.display())
    term.exit()


def test_undo_with_nothing_of_its_own_names_rewind(server, workspace):
    term = Terminal(server, workspace)
    term.send("/undo\r")
    term.wait_screen("what commands changed, /rewind")
    term.exit()
