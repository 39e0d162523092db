"""One slash-command table for the REPL and an editor: each front end's /help is the table's rows it
offers (then the command files), a row is run by the table's function or by its one front end's own,
never both, and what a shared command does is written in slash/ alone. The REPL through a real pty
(pyte), the editor through the SDK's client over real pipes, and a real runtime in between."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nanohermes.acp import commands as editor_commands
from nanohermes.acp.outcome_view import markdown
from nanohermes.configure import load_config
from nanohermes.runtime import build_runtime
from nanohermes.slash.table import COMMANDS, EDITOR, REPL, offered, run_command
from nanohermes.ui import commands as repl_commands
from tests.acp.test_acp import agent_env, new_session, prompt, wait_for
from tests.support.acp_client import AcpHarness
from tests.support.scripted_server import ScriptedServer, call, text
from tests.support.terminal import Terminal

PACKAGE = Path(__file__).resolve().parents[2] / "nanohermes"
# The call that does each shared command's work: written in slash/ and in no front end.
WORK = {
    "/compact": "fit_context(",
    "/undo": "undo_last(",
    "/diff": ".changes()",
    "/reset": "runtime.reset(",
    "/memory": "memory_command(",
    "/tasks": "tasks_command(",
    "/context": "context_parts(",
    "/cost": "Prices(",
    "/session": "size_bytes(",
}
# The rows whose outcome is the same when asked twice: the editor's and the table's compared.
READ_ONLY = ("/session", "/cost", "/context", "/context summary", "/memory list", "/diff", "/tasks")


def command_file(workspace: Path) -> None:
    folder = workspace / ".nanohermes" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text("---\ndescription: review a file\nargument-hint: FILE\n---\nReview $ARGUMENTS.\n")


def test_every_row_is_run_once_by_the_table_or_by_the_one_front_end_whose_own_it_is():
    for row in COMMANDS.values():
        own = {REPL: row.name in repl_commands.HANDLERS, EDITOR: row.name in editor_commands.OWN}
        if row.run is not None:
            assert not any(own.values()), f"{row.name}: the table runs it, and a front end too"
        else:
            assert all(own[front_end] for front_end in row.offered), f"{row.name}: offered, and nobody runs it"
    assert set(repl_commands.HANDLERS) | set(editor_commands.OWN) <= set(COMMANDS)
    assert list(repl_commands.COMMANDS.values()) == offered(REPL)  # the REPL's view is the table's rows


def test_what_a_shared_command_does_is_written_in_slash_alone():
    front_ends = [*(PACKAGE / "ui").rglob("*.py"), *(PACKAGE / "acp").rglob("*.py"), PACKAGE / "cli.py"]
    for name, work in WORK.items():
        assert COMMANDS[name].run is not None and COMMANDS[name].offered == {REPL, EDITOR}
        assert work in Path(COMMANDS[name].run.__code__.co_filename).read_text(), name
        written = [str(path.relative_to(PACKAGE)) for path in front_ends if work in path.read_text()]
        assert written == [], f"{name}'s work ({work}) is written in a front end too: {written}"


@pytest.fixture
def runtime(server, workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = load_config(base_url=server.url, workspace=workspace, mode="auto")
    runtime = build_runtime(config, "table", lambda event: None, approve=None)
    yield runtime
    runtime.close()


def test_an_editors_command_gives_what_the_tables_function_gives(runtime, server):
    server.add(call("write_file", {"path": "new.txt", "content": "fresh\n"}), text("Made it."))
    runtime.agent.run_turn("make a file")
    for line in READ_ONLY:
        name, _, arg = line.partition(" ")
        assert editor_commands.take(line, runtime) == run_command(runtime, COMMANDS[name], arg), line
    undone = editor_commands.take("/undo", runtime)
    assert "↶ undid write_file on new.txt: removed the file it created · 0 more to undo" in markdown(undone)
    assert "```diff\n--- a/new.txt\n+++ b/new.txt\n@@ -1 +0,0 @@\n-fresh\n```" in markdown(undone)
    notes = [m for m in runtime.agent.messages if str(m.get("content")).startswith("[The user ran /undo: new.txt")]
    assert len(notes) == 1 and notes[0]["role"] == "user"  # told once, a message of its own


@pytest.mark.pty
@pytest.mark.subprocess
def test_the_repls_help_is_the_tables_rows_for_the_repl_then_the_command_files(server, workspace):
    command_file(workspace)
    term = Terminal(server, workspace, cols=120, rows=60)
    term.send("/help\r")
    term.expect("Ctrl-D")
    term.ready()
    screen = term.scrollback()
    start = next(i for i, line in enumerate(screen) if line.startswith("  /help "))
    listed = [line.split()[0] for line in screen[start:] if line.startswith("  /")]
    assert listed == [c.name for c in offered(REPL)] + ["/review"]
    shown = " ".join(" ".join(screen[start:]).split())
    assert all(" ".join(c.help.split()) in shown for c in offered(REPL))
    term.exit()


@pytest.mark.subprocess
def test_an_editors_help_and_announced_commands_are_the_tables_rows_for_an_editor(tmp_path):
    model = ScriptedServer()
    workspace = tmp_path / "project"
    workspace.mkdir()
    command_file(workspace)
    editor = AcpHarness(agent_env(model, tmp_path / "home"), tmp_path, tmp_path / "stderr.log")
    try:
        session_id = new_session(editor, workspace)
        wait_for(lambda: editor.client.of_kind(session_id, "available_commands_update"))
        (announced,) = editor.client.of_kind(session_id, "available_commands_update")
        rows = offered(EDITOR)
        expected = [c.name[1:] for c in rows] + ["review"]
        assert [c.name for c in announced.available_commands] == expected
        assert [c.description for c in announced.available_commands][: len(rows)] == [c.help for c in rows]
        assert prompt(editor, session_id, "/help").stop_reason == "end_turn"
        assert re.findall(r"^- `/([^`]+)`", editor.client.text(session_id), re.MULTILINE) == expected
        assert model.chat_requests() == []  # no command reached the model
    finally:
        assert editor.close() == 0
        model.close()
    assert editor.check.deviations == []
