"""Coaching keys only on what the user asked in their own words (loop/coach/): a command file's
expansion, text piped beside the task and a `!` command's output never make a request "a change to
one file", even under the small strategy at a small window, where such a request is asked for the
file whole with the request itself. Through the real CLI in this process and the scripted server."""

from __future__ import annotations

import subprocess

from typer.testing import CliRunner

from nanohermes.cli import app
from nanohermes.loop.coach.small_texts import WHOLE_AT_ONCE
from nanohermes.loop.coach.wholefile import asked_for
from nanohermes.tools.builtin import BUILTIN_TOOLS
from tests.support.agents import make_agent
from tests.support.scripted_server import ScriptedServer, text

# A commit command in Claude Code's own shape (its commit-commands plugin): the context from `!` lines,
# then the task. Its `git diff HEAD` names src/app.py, and the diff holds words like "fix" and "add".
COMMIT_SPLIT = """---
allowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*), Bash(git diff:*)
description: Split the working tree's changes into small commits
---

## Context

- Current git status: !`git status --short`
- Current git diff (staged and unstaged changes): !`git diff HEAD`
- Current branch: !`git branch --show-current`

## Your task

Based on the above changes, propose how to split them into small commits, each with its message.
"""
APP = "def total(items):\n    return sum(items)\n"
APP_CHANGED = "def total(items):\n    # fix: add the tax\n    return sum(items) * 1.2\n"
PLAN = "One commit: src/app.py adds the tax to total."
WHOLE_ASK = "Reply with the whole new content of src/app.py"


def git_workspace(workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text(APP)
    for argv in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "app"]):
        subprocess.run(["git", *argv], cwd=workspace, check=True, capture_output=True)
    (workspace / "src" / "app.py").write_text(APP_CHANGED)


def cli(server, workspace, *args, stdin=None):
    r = CliRunner().invoke(
        app, [*args, "--coach", "small", "--base-url", server.url, "-C", str(workspace)], input=stdin
    )
    assert r.exit_code == 0, (r.stdout, r.stderr, r.exception)
    return r


def test_a_commit_command_whose_diff_names_a_file_draws_no_ask_for_that_file_whole(workspace, isolated_home):
    git_workspace(workspace)
    (workspace / ".claude" / "commands").mkdir(parents=True)
    (workspace / ".claude" / "commands" / "commit-split.md").write_text(COMMIT_SPLIT)
    server = ScriptedServer(n_ctx=8192)  # a small window: the small strategy's ask would travel with the request
    try:
        server.add(text(PLAN), text("(a request too many)"))
        r = cli(server, workspace, "-p", "/commit-split", "--yes", "--sandbox", "off")
        [sent] = server.chat_requests()  # the plain answer ended the turn: nothing sent back
    finally:
        server.close()
    request = sent["messages"][-1]["content"]
    assert "src/app.py" in request and "# fix: add the tax" in request  # the diff reached the model
    assert sent.get("tool_choice") is None and WHOLE_ASK not in request
    assert r.stdout.strip() == PLAN


def test_a_status_and_diff_piped_beside_a_task_name_no_file_to_change(workspace, isolated_home):
    git_workspace(workspace)
    status = subprocess.run(["git", "status", "--short"], cwd=workspace, capture_output=True, text=True).stdout
    diff = status + subprocess.run(["git", "diff", "HEAD"], cwd=workspace, capture_output=True, text=True).stdout
    server = ScriptedServer(n_ctx=8192)
    try:
        server.add(text("The tax is added in total."), text("(a request too many)"))
        cli(server, workspace, "-p", "Fix what is wrong in this diff.", stdin=diff)
        [sent] = server.chat_requests()
    finally:
        server.close()
    request = sent["messages"][-1]["content"]
    assert "# fix: add the tax" in request and WHOLE_ASK not in request and sent.get("tool_choice") is None


def test_the_users_own_words_naming_the_file_still_draw_the_ask(workspace, isolated_home):
    """The same workspace, the file named by the user: the small strategy asks for it whole (the
    counterpart that shows the two tests above can fail)."""
    git_workspace(workspace)
    server = ScriptedServer(n_ctx=8192)
    try:
        server.add(text(f"```python\n{APP}```"), text("Done."))
        cli(server, workspace, "-p", "Fix total in src/app.py so it adds no tax.", "--yes")
        first = server.chat_requests()[0]
    finally:
        server.close()
    assert first.get("tool_choice") == "none"
    assert first["messages"][-1]["content"].endswith(asked_for("src/app.py", WHOLE_AT_ONCE))


def test_a_bang_commands_output_names_no_file_to_change(server, workspace):
    """The REPL's `!git diff` output travels as the request's context: "fix it" then names no file."""
    git_workspace(workspace)
    diff = subprocess.run(["git", "diff", "HEAD"], cwd=workspace, capture_output=True, text=True).stdout
    tools = [t for t in BUILTIN_TOOLS if t.name in ("read_file", "edit_file", "write_file")]
    server.add(text("The tax is added in total."), text("(a request too many)"))
    agent = make_agent(server, workspace, tools=tools, coach="small", context_window=8_192)
    assert agent.run_turn("Fix it.", f"$ git diff HEAD\n{diff}").final_text == "The tax is added in total."
    [sent] = server.chat_requests()
    assert "# fix: add the tax" in sent["messages"][-1]["content"] and sent.get("tool_choice") is None


def test_a_command_files_own_words_naming_a_file_to_change_draw_no_coaching(workspace, isolated_home):
    """The file's own words name src/app.py (attached: it is tracked) and ask to change it: still the
    command's words, not the user's — the request goes out with the tools on, and a plain answer ends it."""
    git_workspace(workspace)
    (workspace / ".claude" / "commands").mkdir(parents=True)
    (workspace / ".claude" / "commands" / "tidy.md").write_text("Fix the style of src/app.py, then say what changed.\n")
    server = ScriptedServer(n_ctx=8192)
    try:
        server.add(text("It is tidy already."), text("(a request too many)"))
        r = cli(server, workspace, "-p", "/tidy", "--yes", "--sandbox", "off")
        [sent] = server.chat_requests()
    finally:
        server.close()
    request = sent["messages"][-1]["content"]
    assert "return sum(items) * 1.2" in request  # attached, as the file's own words name it
    assert sent.get("tool_choice") is None and WHOLE_ASK not in request
    assert r.stdout.strip() == "It is tidy already."
