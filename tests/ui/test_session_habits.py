"""/clear keeps the cleared conversation resumable, /init drafts AGENTS.md and asks before writing,
/context summary shows the compaction summary: in a real pty, and the draft as a pure function."""

import json

import pytest

from nanohermes.ui.init_command import draft_agents_md
from tests.support.cli import run_cli
from tests.support.scripted_server import call, is_summary_request, text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]


def test_clear_starts_a_new_session_and_the_cleared_one_stays_resumable(server, workspace, isolated_home):
    server.add(text("first answer"), text("fresh answer"), text("back again"))
    term = Terminal(server, workspace, "--session", "before")
    term.send("remember the parser bug\r")
    term.expect("first answer")
    term.ready()
    term.send("/clear\r")
    term.expect("/resume before returns to it")
    term.ready()
    term.send("hello\r")
    term.expect("fresh answer")
    term.ready()
    assert [m["role"] for m in server.chat_requests()[1]["messages"]] == ["system", "user"]  # a clean slate
    term.send("/resume before\r")
    term.expect("resumed, 2 messages")
    term.ready()
    term.send("and now?\r")
    term.expect("back again")
    term.ready()
    resumed = [m["content"] for m in server.chat_requests()[2]["messages"] if m["role"] == "user"]
    assert resumed == ["remember the parser bug", "and now?"]
    term.exit()
    names = sorted(p.stem for p in (isolated_home / "sessions").glob("*.jsonl"))
    assert "before" in names and len(names) == 2
    listing = run_cli(["sessions"], workspace).stdout  # the cleared one is listed as any session is
    assert any(line.startswith("before ") and "remember the parser bug" in line for line in listing.splitlines())


def test_init_shows_a_draft_and_writes_agents_md_only_on_yes(server, workspace):
    (workspace / "pyproject.toml").write_text(
        '[project]\nname = "calc"\n[project.optional-dependencies]\ntest = ["pytest"]\n[tool.ruff]\nline-length = 100\n'
    )
    (workspace / "tests").mkdir()
    (workspace / "tests" / "test_calc.py").write_text("def test_add(): pass\n")
    (workspace / "README.md").write_text("# calc\n\nA tiny calculator library for the command line.\n")
    term = Terminal(server, workspace)
    term.send("/init\r")
    term.expect(r"write it to AGENTS.md\? \[y/N\]")
    term.send("n\r")
    term.expect("left as it was")
    term.ready()
    assert not (workspace / "AGENTS.md").exists()
    term.send("/init\r")
    term.expect(r"write it to AGENTS.md\?")
    term.send("y\r")
    term.expect("AGENTS.md written")
    term.ready()
    written = (workspace / "AGENTS.md").read_text()
    assert "A tiny calculator library" in written and "`python -m pytest`" in written and "[test]" in written
    (workspace / "AGENTS.md").write_text("# mine\n")
    term.send("/init\r")
    term.expect(r"AGENTS.md exists \(1 lines\); replace it with this draft\? \[y/N\]")
    term.send("\r")  # Enter alone is no
    term.expect("left as it was")
    term.ready()
    assert (workspace / "AGENTS.md").read_text() == "# mine\n"
    assert server.chat_requests() == []  # made from the workspace, no model asked
    term.exit()


def test_the_draft_names_the_commands_the_manifests_give_and_invents_none():
    files = ["package.json", "Makefile", "src/app.ts", "go.mod"]
    texts = {
        "package.json": json.dumps({"scripts": {"test": "vitest", "build": "tsc", "weird": "x"}}),
        "Makefile": "all: build\nbuild:\n\tgo build\nVAR := 1\ncheck: test\n",
    }
    draft = draft_agents_md("demo", files, texts.get)
    assert "`npm run test`" in draft and "`npm run build`" in draft and "weird" not in draft
    assert "`make all`, `make build`, `make check`" in draft and "VAR" not in draft
    assert "`go test ./...`" in draft and "pytest" not in draft and "cargo" not in draft
    assert "`src/`" in draft


def test_context_summary_shows_the_summary_that_stands_in_for_compacted_messages(server, workspace):
    for i in range(6):
        (workspace / f"f{i}.txt").write_text(f"file {i}\n" * 50)
    server.add(*[call("read_file", {"path": f"f{i}.txt"}) for i in range(6)], text("read them all"))
    server.handler = lambda body: (
        text("Goal: read six files.\nProgress: all six read; nothing is wrong in f3.txt.")
        if is_summary_request(body)
        else text("ok")
    )
    term = Terminal(server, workspace, "--mode", "auto", rows=40)
    term.send("/context summary\r")
    term.expect("nothing in this conversation has been summarised yet")
    term.ready()
    term.send("read every file\r")
    term.expect("read them all")
    term.ready()
    term.send("/compact\r")
    term.expect("summarised")
    term.ready()
    term.send("/context summary\r")
    term.wait_screen("nothing is wrong in f3.txt")
    term.settle()
    assert any("summary of the earlier conversation" in line for line in term.display())
    term.exit()
