"""A Python file a write or an edit left unparseable is said in the result (tools/syntax.py),
on real files through the real tools."""

from __future__ import annotations

import pytest

from nanohermes.tools import ToolContext
from nanohermes.tools.edit import edit_file
from nanohermes.tools.files import write_file
from nanohermes.tools.syntax import syntax_note

GOOD = "def add(a, b):\n    return a - b\n"


@pytest.fixture
def ctx(workspace, isolated_home):
    return ToolContext(workspace=workspace, home=isolated_home)


def test_an_edit_that_breaks_a_python_file_says_where_and_still_writes(ctx):
    (ctx.workspace / "calc.py").write_text(GOOD)
    out = str(edit_file.func(ctx, path="calc.py", old_text="return a - b", new_text="return (a + b"))
    assert (ctx.workspace / "calc.py").read_text() == "def add(a, b):\n    return (a + b\n"
    assert "warning: calc.py no longer parses as Python" in out
    assert "line 2" in out and "2 | return (a + b" in out


def test_an_edit_that_keeps_it_parsing_says_nothing_more(ctx):
    (ctx.workspace / "calc.py").write_text(GOOD)
    out = str(edit_file.func(ctx, path="calc.py", old_text="a - b", new_text="a + b"))
    assert "warning" not in out


def test_write_file_of_a_new_broken_module_is_warned_and_a_fixed_one_is_not(ctx):
    out = str(write_file.func(ctx, path="pkg/mod.py", content="def f(:\n    pass\n"))
    assert "warning: pkg/mod.py no longer parses" in out and "line 1" in out
    out = str(write_file.func(ctx, path="pkg/mod.py", content="def f():\n    pass\n"))
    assert "warning" not in out


@pytest.mark.parametrize(
    ("shown", "before", "after"),
    [
        ("notes.txt", GOOD, "def add(:"),  # not Python by its name
        ("old.py", "print 'py2'\n", "print 'still py2'\n"),  # did not parse before either
        ("calc.py", GOOD, GOOD.replace("-", "+")),  # parses
        ("calc.py", None, "x = '\\d'\n"),  # an invalid escape is a warning of Python's, not an error
    ],
)
def test_no_note_where_there_is_nothing_new_to_say(shown, before, after):
    assert syntax_note(shown, before, after) == ""


def test_an_indentation_slip_is_named():
    note = syntax_note("calc.py", GOOD, "def add(a, b):\nreturn a - b\n")
    assert "no longer parses" in note and "line 2" in note and "indent" in note
