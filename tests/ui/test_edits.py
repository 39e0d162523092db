"""Edits you can see and take back, in a real pty: diffs on screen, /diff, /undo."""

import pytest

from tests.support.scripted_server import call, text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIX = {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"}


def turn(term: Terminal, prompt: str) -> list[str]:
    term.send(prompt + "\r")
    term.expect("session ")
    term.ready()
    return term.display()


def command(term: Terminal, line: str, until: str) -> list[str]:
    term.send(line + "\r")
    term.expect(until)
    term.ready()
    return term.display()


def test_an_applied_edit_shows_its_coloured_diff_also_under_yes(server, workspace):
    (workspace / "calc.py").write_text(CALC)
    server.add(call("edit_file", FIX), text("Fixed."))
    term = Terminal(server, workspace, "--yes", colour=True)
    screen = turn(term, "fix add")
    at = next(i for i, line in enumerate(screen) if "edit_file path=calc.py" in line)
    assert screen[at].startswith("✓ ") and "replaced 1 occurrence (line 2), +1 −1" in screen[at]
    assert screen[at + 1 : at + 3] == ["  --- a/calc.py", "  +++ b/calc.py"]
    assert "  -    return a - b" in screen and "  +    return a + b" in screen
    assert "red" in term.colours_on_line("-    return a - b") and "green" in term.colours_on_line("+    return a + b")
    term.exit()


def test_undo_restores_the_file_repeatably_and_the_model_is_told(server, workspace):
    (workspace / "calc.py").write_text(CALC)
    server.add(call("edit_file", FIX), call("write_file", {"path": "notes.md", "content": "# notes\n"}), text("Done."))
    term = Terminal(server, workspace, "--yes")
    turn(term, "fix and note")
    screen = command(term, "/undo", "more to undo")
    assert any(
        line.startswith("↶ undid write_file on notes.md: removed the file it created · 1 more to undo")
        for line in screen
    )
    assert not (workspace / "notes.md").exists()
    screen = command(term, "/undo", "more to undo")
    assert any(
        "undid edit_file on calc.py: restored the content from before it · 0 more to undo" in line for line in screen
    )
    assert (workspace / "calc.py").read_text() == CALC
    assert "nothing to undo" in "\n".join(command(term, "/undo", "nothing to undo"))
    server.add(text("noted"))
    turn(term, "what now?")
    *_, first, _, second, _, sent = server.chat_requests()[-1]["messages"]
    assert sent == {"role": "user", "content": "what now?"}  # the user's words alone; each note a message of its own
    assert "/undo" in first["content"] and "notes.md" in first["content"]
    assert "/undo" in second["content"] and "calc.py" in second["content"]
    term.exit()


def test_undo_refuses_when_the_file_changed_since(server, workspace):
    (workspace / "calc.py").write_text(CALC)
    server.add(call("edit_file", FIX), text("Fixed."))
    term = Terminal(server, workspace, "--yes")
    turn(term, "fix add")
    (workspace / "calc.py").write_text("# my own rewrite\n")
    screen = "\n".join(command(term, "/undo", "not undone"))
    assert "calc.py changed since edit_file wrote it" in screen
    assert (workspace / "calc.py").read_text() == "# my own rewrite\n"
    term.exit()


def test_diff_shows_every_file_the_session_changed(server, workspace):
    (workspace / "calc.py").write_text(CALC)
    server.add(call("edit_file", FIX), call("write_file", {"path": "new.txt", "content": "fresh\n"}), text("Done."))
    term = Terminal(server, workspace, "--yes")
    turn(term, "change things")
    screen = command(term, "/diff", r"\+fresh")
    assert "calc.py · 1 change" in screen and "new.txt · 1 change" in screen
    assert "  +    return a + b" in screen and "  +fresh" in screen
    term.exit()


def test_an_approved_edit_shows_its_diff_once_in_the_question(server, workspace):
    (workspace / "calc.py").write_text(CALC)
    server.add(call("edit_file", FIX), text("Fixed."))
    term = Terminal(server, workspace, "--mode", "ask")
    term.send("fix add\r")
    term.expect("allow")
    term.settle()
    screen = term.display()
    assert "● Edit calc.py" in screen and "  +    return a + b" in screen
    assert any("[a]lways: write_file and edit_file on calc.py" in line for line in screen)
    term.send("y\r")
    term.expect("session ")
    term.ready()
    screen = term.display()
    assert sum(line == "  +    return a + b" for line in screen) == 1
    assert (workspace / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    term.exit()
