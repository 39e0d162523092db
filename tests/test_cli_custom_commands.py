"""Command files through the real CLI (`-p "/review x.py"`): what the model receives — the body with
its arguments, the files its `@path`s name, its `!` commands' output — and that a repository's
command runs nothing the session's rules would not run for the model."""

import pytest
from typer.testing import CliRunner

from nanohermes.cli import app
from nanohermes.sandbox.probe import probe
from tests.support.cli import run_cli
from tests.support.scripted_server import text

pytestmark = pytest.mark.subprocess

SANDBOX = probe().bwrap or probe().landlock_abi >= 4

REVIEW = """---
description: Review a file for bugs
argument-hint: [file] [focus]
allowed-tools: Bash(git diff:*)
---
Review @$1 for bugs; focus on $2.
!echo "lines: $(wc -l < $1)"
"""


def in_process(server, workspace, *args):
    """The CLI in this interpreter (no start-up to pay): for the cases where the process is not the point."""
    r = CliRunner().invoke(app, [*args, "--base-url", server.url, "-C", str(workspace)])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r


def first_user_message(server) -> str:
    return next(m["content"] for m in server.chat_requests()[0]["messages"] if m["role"] == "user")


def review_workspace(workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    command = workspace / ".nanohermes" / "commands" / "review.md"
    command.parent.mkdir(parents=True)
    command.write_text(REVIEW)


@pytest.mark.skipif(not SANDBOX, reason="neither bubblewrap nor Landlock ABI 4 works here")
def test_a_command_file_runs_in_one_shot_with_its_arguments_file_and_sandboxed_command(server, workspace):
    review_workspace(workspace)
    server.add(text("add subtracts."))
    r = run_cli(["-p", "/review calc.py 'the arithmetic'", "--base-url", server.url], workspace)
    assert r.returncode == 0, r.stderr
    assert "add subtracts." in r.stdout
    sent = first_user_message(server)
    assert sent.startswith("Review @calc.py for bugs; focus on the arithmetic.\n$ echo")
    assert "exit code 0" in sent and "lines: 2" in sent  # the `!` line ran in the sandbox, asking nothing
    assert "[NanoHermes attached" in sent and "return a - b" in sent  # @calc.py attached as any request's
    assert "/review: the prompt of .nanohermes/commands/review.md" in r.stderr and "ran `echo" in r.stderr


def test_a_command_files_bang_line_that_needs_a_yes_is_refused_in_one_shot_and_the_model_is_told(server, workspace):
    (workspace / ".claude" / "commands").mkdir(parents=True)
    (workspace / ".claude" / "commands" / "mark.md").write_text("Say done.\n!touch marked.txt\n")
    server.add(text("done"))
    r = run_cli(["-p", "/mark", "--base-url", server.url, "--sandbox", "off"], workspace)
    assert not (workspace / "marked.txt").exists()  # a repository's command file is no permission
    sent = first_user_message(server)
    assert sent.startswith("Say done.\n[`touch marked.txt` was not run: refused: run_command needs the user's approval")
    assert "`touch marked.txt` not run" in r.stderr


def test_a_deny_rule_refuses_a_command_files_bang_line_even_with_yes(server, workspace):
    (workspace / ".nanohermes" / "commands").mkdir(parents=True)
    (workspace / ".nanohermes" / "commands" / "ship.md").write_text("Ship it.\n!touch pushed.txt\n")
    server.add(text("ok"))
    r = in_process(server, workspace, "-p", "/ship", "--yes", "--deny", "run_command:touch *", "--sandbox", "off")
    assert r.exit_code == 0, r.stderr
    assert not (workspace / "pushed.txt").exists()
    assert "refused: a deny rule (run_command:touch *" in first_user_message(server)


def test_a_built_in_name_and_an_unknown_slash_go_to_the_model_as_written(server, workspace):
    (workspace / ".nanohermes" / "commands").mkdir(parents=True)
    (workspace / ".nanohermes" / "commands" / "help.md").write_text("I shadow /help")
    server.add(text("ok"), text("ok"))
    r = in_process(server, workspace, "-p", "/help me")
    assert first_user_message(server) == "/help me"
    assert "/help is a built-in command, which a file never replaces" in r.stderr


def test_the_users_own_command_file_runs_its_bang_lines_as_the_user(server, workspace, isolated_home, tmp_path):
    outside = tmp_path / "outside.txt"
    (isolated_home / "commands").mkdir()
    (isolated_home / "commands" / "note.md").write_text(f"Say noted.\n!echo mine > {outside}\n")
    (workspace / ".claude" / "commands").mkdir(parents=True)
    (workspace / ".claude" / "commands" / "theirs.md").write_text(f"Say noted.\n!echo theirs > {outside}.repo\n")
    server.add(text("noted"), text("noted"))
    mine = run_cli(["-p", "/note", "--base-url", server.url], workspace)
    theirs = run_cli(["-p", "/theirs", "--base-url", server.url], workspace)
    assert outside.read_text() == "mine\n" and "ran `echo mine" in mine.stderr and "as you" in mine.stderr
    assert not (tmp_path / "outside.txt.repo").exists()  # the repository's runs in the sandbox, as the model's would
    assert "as you" not in theirs.stderr
