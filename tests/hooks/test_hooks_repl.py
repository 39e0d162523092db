"""The REPL in a real pty with a workspace's hooks: the trust question, then the hooks running
(SessionStart, a UserPromptSubmit that blocks, PreCompact and PostCompact around /compact) as the user sees them."""

from __future__ import annotations

import json

import pytest

from tests.support.hook_scripts import AFTER_COMPACT, hooks_toml
from tests.support.scripted_server import call, is_summary_request, text
from tests.support.terminal import Terminal

BLOCK_SECRETS = (
    "grep -q secret && { echo 'that prompt holds a secret: not sent' >&2; exit 2; }; exit 0"  # reads the JSON
)

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]


def test_a_trusted_workspaces_hooks_run_in_the_repl_after_one_question(server, workspace, isolated_home):
    nano = workspace / ".nanohermes"
    nano.mkdir()
    (nano / "after-compact.md").write_text("Re-read NOTES.md before the next edit.\n")
    (nano / "config.toml").write_text(
        hooks_toml(
            [
                ("SessionStart", "touch started; echo 'start note: tests run with make test'", None),
                ("UserPromptSubmit", BLOCK_SECRETS, None),
                ("PreCompact", "cat > compacting.json", None),
                ("PostCompact", AFTER_COMPACT, None),
            ]
        )
    )
    for i in range(6):
        (workspace / f"f{i}.txt").write_text(f"file {i}\n")
    server.add(*[call("read_file", {"path": f"f{i}.txt"}) for i in range(6)], text("read them all"))
    server.handler = lambda body: text("Goal: read six files.") if is_summary_request(body) else text("hi there")
    term = Terminal(server, workspace, "--mode", "auto", rows=40, wait_ready=False)
    term.expect("Trust this workspace's hooks")
    screen = "\n".join(term.display())
    assert (
        "PostCompact: cat .nanohermes/after-compact.md" in screen
        and "defines hooks in .nanohermes/config.toml" in screen
    )
    assert not (workspace / "started").exists()  # nothing ran before the answer
    term.send("y\r")
    term.ready()
    assert (workspace / "started").exists() and list((isolated_home / "trust").iterdir())
    term.send("read every file\r")
    term.expect("read them all")
    term.ready()
    assert "start note: tests run with make test" in server.chat_requests()[-1]["messages"][1]["content"]
    sent = len(server.chat_requests())
    term.send("my secret is 42\r")
    term.wait_screen("that prompt holds a secret: not sent")
    term.prompt_shown()
    assert len(server.chat_requests()) == sent  # the blocked prompt never left
    term.send("/compact\r")
    term.expect("summarised")
    term.ready()
    assert json.loads((workspace / "compacting.json").read_text())["trigger"] == "manual"
    term.send("go on\r")
    term.expect("hi there")
    term.ready()
    last = server.chat_requests()[-1]["messages"]
    assert any(m["content"] == "[PostCompact hook output]\nRe-read NOTES.md before the next edit." for m in last)
    assert term.exit() == 0
