"""Which diagnostics a change introduced (pure): old problems, moved or not, are never said again;
a second copy of one is; the note says first that the edit was made, and caps what it lists."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nanohermes.lsp.problems import MAX_SHOWN, MESSAGE_CHARS, Problem, new_problems, problems_note, problems_of
from nanohermes.tools.diagnosed import MADE

ERROR, WARNING = 1, 2


def diag(line, message, severity=ERROR, character=0, code=None, source="pyflakes"):
    item = {"range": {"start": {"line": line, "character": character}}, "message": message, "severity": severity}
    if code is not None:
        item["code"] = code
    return {**item, "source": source}


def fresh(before, old, after, now, least=ERROR):
    return new_problems(before, problems_of(old), after, problems_of(now), least)


def test_a_problem_that_was_there_before_is_not_new():
    text = "print(foo)\n"
    assert fresh(text, [diag(0, "undefined name 'foo'")], text + "x = 1\n", [diag(0, "undefined name 'foo'")]) == []


def test_an_old_problem_moved_down_by_an_edit_above_it_is_not_new():
    before, after = "print(foo)\n", "import os\n\n\nprint(foo)\n"
    assert fresh(before, [diag(0, "undefined name 'foo'")], after, [diag(3, "undefined name 'foo'")]) == []


def test_a_second_use_of_an_old_undefined_name_on_another_line_is_new():
    before, after = "print(foo)\n", "print(foo)\ny = foo + 1\n"
    old = [diag(0, "undefined name 'foo'")]
    now = [diag(0, "undefined name 'foo'"), diag(1, "undefined name 'foo'", character=4)]
    assert [(p.line, p.character) for p in fresh(before, old, after, now)] == [(1, 4)]


def test_a_copy_of_an_old_line_with_its_problem_is_counted_as_new():
    before, after = "print(foo)\n", "print(foo)\nprint(foo)\n"
    old = [diag(0, "undefined name 'foo'")]
    now = [diag(0, "undefined name 'foo'"), diag(1, "undefined name 'foo'")]
    assert len(fresh(before, old, after, now)) == 1


def test_line_numbers_in_a_message_do_not_make_a_moved_problem_new():
    before, after = "x = 1\nx = 2\n", "\nx = 1\nx = 2\n"
    old = [diag(1, "redefinition of unused 'x' from line 1")]
    now = [diag(2, "redefinition of unused 'x' from line 2")]
    assert fresh(before, old, after, now) == []


def test_only_errors_are_said_unless_warnings_are_asked_for():
    now = [diag(0, "'os' imported but unused", WARNING), diag(1, "undefined name 'bar'")]
    assert [p.message for p in fresh("", [], "import os\nbar()\n", now)] == ["undefined name 'bar'"]
    assert len(fresh("", [], "import os\nbar()\n", now, least=WARNING)) == 2


def test_malformed_diagnostics_are_left_out_and_a_missing_severity_is_an_error():
    items = [
        "not an object",
        {"range": {"start": {"line": -1, "character": 0}}, "message": "negative"},
        {"range": {"start": {"line": True, "character": 0}}, "message": "a bool is no line"},
        {"range": {}, "message": "no start"},
        {"range": {"start": {"line": 0, "character": 0}}, "message": 42},
        {"range": {"start": {"line": 0, "character": 2}}, "message": "kept", "code": {"no": "dict"}},
    ]
    assert problems_of(items) == [Problem(0, 2, ERROR, "kept", "", "")]


def test_the_note_says_first_that_the_edit_was_made_and_caps_the_list_with_a_count():
    problems = [Problem(i, 0, ERROR, f"undefined name 'n{i}'", "F821", "") for i in range(MAX_SHOWN + 3)]
    note = problems_note("src/a.py", "pylsp", problems, warnings=False)
    assert note.startswith(f"\n{MADE}; new problems in src/a.py (pylsp):\n  1:1 undefined name 'n0' [F821]")
    assert note.count("\n  ") == MAX_SHOWN + 1
    assert note.endswith(f"  … and 3 more (the first {MAX_SHOWN} are shown)")
    assert problems_note("a.py", "pylsp", [], warnings=False) == ""


def test_a_long_or_many_lined_message_is_one_line_cut_with_a_mark_and_controls_shown():
    message = "first\nsecond\x1b[31m " + "x" * 500
    note = problems_note("a.py", "s", [Problem(0, 0, WARNING, message, "", "")], warnings=True)
    line = note.splitlines()[-1]
    assert line.startswith("  1:1 warning: first second␛[31m ") and line.endswith("…")
    assert len(line) < MESSAGE_CHARS + 30 and "\x1b" not in note


lines = st.lists(st.text(alphabet="abc ()=", max_size=8), max_size=6)


@given(lines, st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["a", "b"])), max_size=6), st.integers(0, 4))
def test_lines_inserted_above_never_make_a_problem_new(text_lines, spots, inserted):
    before = "\n".join(text_lines) + "\n"
    after = "\n" * inserted + before
    old = [diag(line, message) for line, message in spots]
    now = [diag(line + inserted, message) for line, message in spots]
    assert fresh(before, old, after, now) == []


@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["a", "b"]), st.integers(1, 4)), max_size=8))
def test_a_file_checked_twice_unchanged_has_nothing_new(spots):
    text = "one\ntwo\nthree\n"
    items = [diag(line, message, severity) for line, message, severity in spots]
    assert fresh(text, items, text, items, least=4) == []
