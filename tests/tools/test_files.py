"""read_file, write_file and edit_file on real files: every cap at, below and above its limit."""

import os
import stat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nanohermes.errors import ToolError
from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.builtin import BUILTIN_TOOLS
from nanohermes.tools.edit import SAME_QUOTE, _with_file_quotes, edit_file
from nanohermes.tools.files import MAX_FILE_BYTES, MIN_LINES, read_file, write_file
from nanohermes.tools.steering import READ_FIRST

TOOLS = {t.name: t for t in BUILTIN_TOOLS}


@pytest.fixture
def ctx(workspace, isolated_home):
    return ToolContext(workspace=workspace, home=isolated_home)


@pytest.fixture
def roomy(workspace, isolated_home):
    """A context whose output budget never interferes with the cap under test."""
    return ToolContext(workspace=workspace, home=isolated_home, max_output=10_000_000)


def lines_file(path, n, text="x"):
    path.write_text("".join(f"{text}{i}\n" for i in range(1, n + 1)))
    return path


def read(ctx, **args):
    return read_file.func(ctx, **args)


# ---------------------------------------------------------------- read_file


def test_read_file_numbers_lines_under_a_header_naming_file_and_range(ctx, workspace):
    (workspace / "a.py").write_text("import os\n\nprint(1)\n")
    assert read(ctx, path="a.py") == "read_file a.py lines 1–3 of 3\n1\timport os\n2\t\n3\tprint(1)"


def test_read_file_of_exactly_2000_lines_has_no_more_note(roomy, workspace):
    lines_file(workspace / "f.txt", 2000)
    out = read(roomy, path="f.txt")
    assert out.startswith("read_file f.txt lines 1–2000 of 2000\n")
    assert "more lines" not in out


def test_read_file_stops_at_2000_lines_and_says_how_many_more(roomy, workspace):
    lines_file(workspace / "f.txt", 2001)
    out = read(roomy, path="f.txt")
    assert out.startswith("read_file f.txt lines 1–2000 of 2001\n")
    assert out.endswith("\n… 1 more lines (total 2001); continue with offset=2001")


def test_read_file_offset_and_limit_pick_a_range(ctx, workspace):
    lines_file(workspace / "f.txt", 100)
    out = read(ctx, path="f.txt", offset=10, limit=25)
    assert out.startswith("read_file f.txt lines 10–34 of 100\n10\tx10\n11\tx11\n")
    assert out.endswith("\n34\tx34\n… 66 more lines (total 100); continue with offset=35")


def test_a_limit_under_a_screenful_reads_a_screenful(ctx, workspace):
    """Qwen2.5-Coder-1.5B read a 14-line file with limit=1, one request per line, until the
    step limit: a tiny limit reads MIN_LINES lines (the rest of a short file)."""
    lines_file(workspace / "f.txt", 100)
    out = read(ctx, path="f.txt", offset=10, limit=3)
    assert out.startswith(f"read_file f.txt lines 10–{9 + MIN_LINES} of 100\n")
    lines_file(workspace / "short.txt", 14)
    out = read(ctx, path="short.txt", offset=1, limit=1)
    assert out.startswith("read_file short.txt lines 1–14 of 14\n") and out.endswith("\n14\tx14")


def test_read_file_offset_zero_means_the_start_and_past_the_end_is_an_error(ctx, workspace):
    lines_file(workspace / "f.txt", 5)
    assert read(ctx, path="f.txt", offset=0, limit=1).startswith("read_file f.txt lines 1–5 of 5")
    with pytest.raises(ToolError, match=r"offset 9 is past the end of f.txt \(5 lines\)"):
        read(ctx, path="f.txt", offset=9)


def test_read_file_stops_at_the_output_budget_and_says_where_to_continue(ctx, workspace):
    lines_file(workspace / "wide.txt", 2000, text="y" * 100)
    result = dispatch(ctx, TOOLS, "read_file", {"path": "wide.txt"})
    assert len(result.content.encode()) <= ctx.max_output
    assert "output truncated" not in result.content  # read_file shaped it, dispatch had nothing to cut
    last = int(result.content.split("\n")[-2].split("\t")[0])
    assert result.content.endswith(f"… {2000 - last} more lines (total 2000); continue with offset={last + 1}")


def test_read_file_at_the_4_mb_limit_is_read(ctx, workspace):
    (workspace / "big.txt").write_bytes(b"a" * (MAX_FILE_BYTES - 1) + b"\n")
    assert read(ctx, path="big.txt").startswith("read_file big.txt lines 1–1 of 1")


def test_read_file_over_4_mb_is_refused_naming_size_limit_and_chunks(ctx, workspace):
    (workspace / "big.txt").write_bytes(b"a\n" * (MAX_FILE_BYTES // 2) + b"b")
    with pytest.raises(ToolError) as err:
        read(ctx, path="big.txt")
    assert str(err.value) == (
        "big.txt is 4194305 bytes, over the 4194304-byte read_file limit; "
        "read it in chunks with offset and limit (e.g. offset=1, limit=500)"
    )


def test_read_file_over_4_mb_can_be_read_in_chunks(ctx, workspace):
    lines_file(workspace / "big.txt", 600_000)  # ~4.5 MB
    assert (workspace / "big.txt").stat().st_size > MAX_FILE_BYTES
    out = read(ctx, path="big.txt", offset=599_999, limit=5)
    assert out == "read_file big.txt lines 599999–600000 of 600000\n599999\tx599999\n600000\tx600000"


def test_read_file_cuts_lines_over_2000_chars_with_a_mark(ctx, workspace):
    (workspace / "long.txt").write_text("a" * 2000 + "\n" + "b" * 2001 + "\n" + "c" * 1_000_000 + "\nend\n")
    lines = read(ctx, path="long.txt").split("\n")
    assert lines[1] == "1\t" + "a" * 2000
    assert lines[2] == "2\t" + "b" * 2000 + " …[line cut at 2000 chars]"
    assert lines[3] == "3\t" + "c" * 2000 + " …[line cut at 2000 chars]"
    assert lines[4] == "4\tend"


def test_read_file_cut_inside_a_multibyte_character_shows_no_replacement_char(ctx, workspace):
    (workspace / "zh.txt").write_text("中" * 5000 + "\n")
    out = read(ctx, path="zh.txt")
    assert "\ufffd" not in out and "(invalid UTF-8" not in out
    assert out.split("\n")[1] == "1\t" + "中" * 2000 + " …[line cut at 2000 chars]"


def test_read_file_refuses_a_file_with_nul_bytes(ctx, workspace):
    (workspace / "blob.bin").write_bytes(b"PK\x03\x04\x00\x00data")
    with pytest.raises(ToolError, match=r"blob\.bin is a binary file \(10 bytes, NUL byte in the first 8 KB\)"):
        read(ctx, path="blob.bin")


def test_read_file_only_sniffs_the_first_8_kb_for_nul(ctx, workspace):
    (workspace / "late.txt").write_bytes(b"a" * 8192 + b"\n\x00\n")
    assert read(ctx, path="late.txt").startswith("read_file late.txt lines 1–2 of 2")


def test_read_file_replaces_invalid_utf8_and_says_so(ctx, workspace):
    (workspace / "latin.txt").write_bytes(b"caf\xe9\nok\n")
    out = read(ctx, path="latin.txt")
    assert out == "read_file latin.txt lines 1–2 of 2 (invalid UTF-8 shown as U+FFFD)\n1\tcaf\ufffd\n2\tok"


def test_read_file_of_a_directory_lists_some_entries(ctx, workspace):
    for name in "abcdefghijkl":
        (workspace / "d" / name).mkdir(parents=True)
    with pytest.raises(
        ToolError, match=r"^d is a directory \(12 entries: a/, b/, .*j/, …\); give a file path, or use glob$"
    ):
        read(ctx, path="d")


def test_read_file_of_an_empty_file_says_empty(ctx, workspace):
    (workspace / "e.txt").write_text("")
    assert read(ctx, path="e.txt") == "read_file e.txt: empty file"


def test_read_file_shows_crlf_lines_without_the_cr(ctx, workspace):
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    assert read(ctx, path="w.txt") == "read_file w.txt lines 1–2 of 2\n1\tone\n2\ttwo"


def test_read_file_through_dispatch_never_splits_a_chinese_character(workspace, isolated_home):
    ctx = ToolContext(workspace=workspace, home=isolated_home, max_output=1001)
    (workspace / "zh.txt").write_text("中文字符" * 300 + "\n")
    result = dispatch(ctx, TOOLS, "read_file", {"path": "zh.txt"})
    assert "\ufffd" not in result.content
    assert "… output truncated (" in result.content


def test_read_only_tools_need_no_approval_and_writers_do():
    assert [t.name for t in BUILTIN_TOOLS] == [
        "read_file",
        "grep",
        "glob",
        "run_command",
        "web_fetch",
        "write_file",
        "edit_file",
    ]
    assert {t.name for t in BUILTIN_TOOLS if t.needs_approval} == {"run_command", "write_file", "edit_file"}
    assert all(t.preview is not None for t in BUILTIN_TOOLS if t.needs_approval)
    assert TOOLS["read_file"].parameters["required"] == ["path"]
    assert TOOLS["edit_file"].parameters["required"] == ["path", "old_text", "new_text"]


# ---------------------------------------------------------------- write_file


def test_write_file_creates_parent_directories_and_reports_a_new_file(ctx, workspace):
    out = write_file.func(ctx, path="a/b/c.txt", content="one\ntwo\n")
    assert out == "write_file a/b/c.txt: new file, 2 lines (8 bytes)"
    assert (workspace / "a" / "b" / "c.txt").read_text() == "one\ntwo\n"


def test_write_file_over_an_existing_file_reports_a_diff(ctx, workspace):
    (workspace / "f.txt").write_text("one\ntwo\nthree\n")
    out = write_file.func(ctx, path="f.txt", content="one\n2\nthree\n")
    assert out.startswith("write_file f.txt: 3 → 3 lines (+1 −1)\n--- a/f.txt\n+++ b/f.txt\n")
    assert "\n-two\n+2\n" in out


def test_write_file_with_identical_content_says_unchanged(ctx, workspace):
    (workspace / "f.txt").write_text("same\n")
    assert write_file.func(ctx, path="f.txt", content="same\n") == "write_file f.txt: unchanged (1 lines, same content)"


def test_write_file_keeps_the_files_final_newline_when_the_content_leaves_it_out(ctx, workspace):
    (workspace / "f.py").write_text("def f():\n    return 1\n")
    out = write_file.func(ctx, path="f.py", content="def f():\n    return 1")  # as a JSON string often has it
    assert out == "write_file f.py: unchanged (2 lines, same content)"
    write_file.func(ctx, path="f.py", content="def f():\n    return 2")
    assert (workspace / "f.py").read_text() == "def f():\n    return 2\n"
    (workspace / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    write_file.func(ctx, path="dos.txt", content="one\r\n2")
    assert (workspace / "dos.txt").read_bytes() == b"one\r\n2\r\n"
    (workspace / "raw.txt").write_text("no newline")  # a file without one is written as given
    write_file.func(ctx, path="raw.txt", content="still none")
    write_file.func(ctx, path="new.txt", content="new, none")
    assert (workspace / "raw.txt").read_text() == "still none" and (workspace / "new.txt").read_text() == "new, none"


def test_write_file_diff_is_capped(ctx, workspace):
    (workspace / "f.txt").write_text("".join(f"line {i}\n" for i in range(500)))
    out = write_file.func(ctx, path="f.txt", content="".join(f"line {i}{'!' * (i % 2)}\n" for i in range(500)))
    assert out.startswith("write_file f.txt: 500 → 500 lines (+250 −250)\n--- a/f.txt\n")
    assert out.endswith(" more lines)") and len(out.splitlines()) == 1 + 60 + 1


def test_a_write_that_keeps_little_of_the_file_shows_no_diff_its_content_is_the_call(ctx, workspace):
    """Qwen2.5-Coder-1.5B filling an Exercism stub: the diff would repeat the call's content."""
    (workspace / "leap.py").write_text("def leap_year(year):\n    pass\n")
    whole = "def leap_year(year):\n    if year % 400 == 0:\n        return True\n    return year % 4 == 0 and year % 100 != 0\n"
    out = write_file.func(ctx, path="leap.py", content=whole)
    assert out == "write_file leap.py: 2 → 4 lines (+3 −1), rewritten: the file is this call's content"
    assert (workspace / "leap.py").read_text() == whole
    kept = "def leap_year(year):\n    if year % 400 == 0:\n        return True\n    return year % 4 == 0\n"
    out = write_file.func(ctx, path="leap.py", content=kept)  # three of four lines kept: the diff says what changed
    assert (
        out.startswith("write_file leap.py: 4 → 4 lines (+1 −1)\n--- a/leap.py\n")
        and "+    return year % 4 == 0\n" in out + "\n"
    )


def test_write_file_preserves_the_mode_and_leaves_no_temp_file(ctx, workspace):
    script = workspace / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o751)
    write_file.func(ctx, path="run.sh", content="echo new\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert sorted(os.listdir(workspace)) == ["run.sh"]


def test_write_file_gives_new_files_the_umask_mode(ctx, workspace):
    old = os.umask(0o027)
    try:
        write_file.func(ctx, path="new.txt", content="x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((workspace / "new.txt").stat().st_mode) == 0o640


def test_write_file_refuses_a_directory_or_a_fifo(ctx, workspace):
    (workspace / "d").mkdir()
    os.mkfifo(workspace / "pipe")
    with pytest.raises(ToolError, match="d is a directory"):
        write_file.func(ctx, path="d", content="x")
    with pytest.raises(ToolError, match="pipe is not a regular file"):
        write_file.func(ctx, path="pipe", content="x")
    with pytest.raises(ToolError, match="pipe is not a regular file"):
        read_file.func(ctx, path="pipe")


def test_write_file_preview_shows_new_file_or_diff(ctx, workspace):
    preview = TOOLS["write_file"].preview
    assert preview(ctx, path="n.txt", content="a\nb\n") == "new file, 2 lines\n+a\n+b"
    (workspace / "n.txt").write_text("a\n")
    assert "\n-a\n+b" in preview(ctx, path="n.txt", content="b\n")
    assert preview(ctx, path="../x", content="").startswith("will fail: ")
    assert (workspace / "n.txt").read_text() != "b\n"  # previewing writes nothing


# ---------------------------------------------------------------- edit_file


def test_edit_file_replaces_a_unique_match_and_shows_the_diff(ctx, workspace):
    (workspace / "m.py").write_text("def f():\n    return 1\n")
    out = edit_file.func(ctx, path="m.py", old_text="return 1", new_text="return 2")
    assert out.startswith("edit_file m.py: replaced 1 occurrence (line 2)\n--- a/m.py\n+++ b/m.py\n")
    assert "-    return 1\n+    return 2" in out
    assert (workspace / "m.py").read_text() == "def f():\n    return 2\n"


def test_edit_file_missing_old_text_names_the_closest_line(ctx, workspace):
    (workspace / "m.py").write_text("alpha = 1\nbeta = compute(alpha)\ngamma = 3\n")
    with pytest.raises(ToolError) as err:
        edit_file.func(ctx, path="m.py", old_text="beta = compute(alfa)", new_text="x")
    assert str(err.value) == (
        "old_text not found in m.py. Closest line(s):\n2\tbeta = compute(alpha)\n"
        "Re-read the file with read_file and copy old_text exactly."
    )


def test_edit_file_whitespace_only_mismatch_lands_and_says_so(ctx, workspace):
    # once refused ("copy the exact indentation"); one place matches, so it lands (tools/tolerant.py)
    (workspace / "m.py").write_text("if x:\n    y()\n    z()\n")
    out = edit_file.func(ctx, path="m.py", old_text="if x:\n  y()", new_text="if x:\n  w()")
    assert out.startswith("edit_file m.py: replaced 1 occurrence (line 1; old_text matched ignoring whitespace")
    assert (workspace / "m.py").read_text() == "if x:\n    w()\n    z()\n"


def test_edit_file_takes_old_text_in_other_quotes_and_writes_new_text_in_the_files(ctx, workspace):
    # Qwen2.5-Coder-1.5B's own copy of a line it had just read, three times running.
    (workspace / "p.py").write_text('RATES = {"food": 0.05, "books": 0.0}\n')
    out = edit_file.func(
        ctx,
        path="p.py",
        old_text="RATES = {'food': 0.05, 'books': 0.0}",
        new_text="RATES = {'food': 0.05, 'books': 0.0, 'FOOD': 0.05}",
    )
    assert out.startswith("edit_file p.py: replaced 1 occurrence (line 1; old_text matched with the file's quotes)\n")
    assert (workspace / "p.py").read_text() == 'RATES = {"food": 0.05, "books": 0.0, "FOOD": 0.05}\n'


def test_edit_file_quote_match_keeps_apostrophes_and_curly_quotes_map_to_straight(ctx, workspace):
    (workspace / "m.py").write_text("msg = 'ready'\n")
    edit_file.func(ctx, path="m.py", old_text="msg = \u2018ready\u2019", new_text="msg = \u2018don't wait\u2019")
    assert (workspace / "m.py").read_text() == "msg = 'don't wait'\n"
    (workspace / "n.py").write_text('say("it\'s ok")\n')
    edit_file.func(ctx, path="n.py", old_text="say('it's ok')", new_text="say('it's fine')")
    assert (workspace / "n.py").read_text() == 'say("it\'s fine")\n'


def test_edit_file_quote_match_needs_one_place_and_a_real_difference(ctx, workspace):
    (workspace / "m.py").write_text("a = \"x\"\nb = 'x'\n")
    with pytest.raises(ToolError, match="old_text not found"):  # "x" and 'x' both match 'x': no guessing
        edit_file.func(ctx, path="m.py", old_text="= \u2018x\u2019", new_text="= 'y'")
    with pytest.raises(ToolError, match="identical"):
        edit_file.func(ctx, path="m.py", old_text="a = 'x'", new_text='a = "x"')
    with pytest.raises(ToolError, match="old_text not found"):  # no quote in old_text: nothing is forgiven
        edit_file.func(ctx, path="m.py", old_text="c = 1", new_text="c = 2")
    assert (workspace / "m.py").read_text() == "a = \"x\"\nb = 'x'\n"


def test_edit_file_quote_match_replaces_all_when_every_place_is_quoted_alike(ctx, workspace):
    (workspace / "m.json").write_text('{"k": "v"}\n{"k": "v"}\n')
    out = edit_file.func(ctx, path="m.json", old_text="'k': 'v'", new_text="'k': 'w'", replace_all=True)
    assert "replaced 2 occurrences (lines 1, 2; old_text matched with the file's quotes)" in out
    assert (workspace / "m.json").read_text() == '{"k": "w"}\n{"k": "w"}\n'


def test_edit_file_refuses_an_ambiguous_match_naming_count_and_lines(ctx, workspace):
    (workspace / "m.py").write_text("x = 1\ny = 2\nx = 1\n\nx = 1\n")
    with pytest.raises(ToolError) as err:
        edit_file.func(ctx, path="m.py", old_text="x = 1", new_text="x = 9")
    assert str(err.value) == (
        "old_text appears 3 times in m.py (lines 1, 3, 5); include more surrounding lines to make it unique, "
        "or set replace_all=true"
    )
    assert (workspace / "m.py").read_text().count("x = 1") == 3


def test_edit_file_replace_all_replaces_every_occurrence(ctx, workspace):
    (workspace / "m.py").write_text("x = 1\ny = 2\nx = 1\n")
    out = edit_file.func(ctx, path="m.py", old_text="x = 1", new_text="x = 9", replace_all=True)
    assert out.startswith("edit_file m.py: replaced 2 occurrences (lines 1, 3)")
    assert (workspace / "m.py").read_text() == "x = 9\ny = 2\nx = 9\n"


def test_edit_file_accepts_lf_old_text_in_a_crlf_file(ctx, workspace):
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    edit_file.func(ctx, path="w.txt", old_text="one\ntwo", new_text="1\n2")
    assert (workspace / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_edit_file_keeps_undecodable_bytes_elsewhere_in_the_file(ctx, workspace):
    (workspace / "l.txt").write_bytes(b"caf\xe9\nold\n")
    edit_file.func(ctx, path="l.txt", old_text="old", new_text="new")
    assert (workspace / "l.txt").read_bytes() == b"caf\xe9\nnew\n"


def test_edit_file_refuses_empty_or_identical_text(ctx, workspace):
    (workspace / "m.py").write_text("a\n")
    with pytest.raises(ToolError, match="old_text is empty; to create or overwrite a whole file use write_file"):
        edit_file.func(ctx, path="m.py", old_text="", new_text="b")
    with pytest.raises(ToolError, match="identical"):
        edit_file.func(ctx, path="m.py", old_text="a", new_text="a")


def test_edit_file_of_a_missing_file_suggests_the_real_one(ctx, workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("a\n")
    result = dispatch(ctx, TOOLS, "edit_file", {"path": "app.py", "old_text": "a", "new_text": "b"})
    assert not result.ok
    assert result.content == (
        "error: app.py does not exist. Closest existing paths: src/app.py. "
        "The workspace has 1 file: src/app.py. " + READ_FIRST
    )


def test_edit_file_preview_shows_the_unified_diff_without_writing(ctx, workspace):
    (workspace / "m.py").write_text("a = 1\n")
    preview = TOOLS["edit_file"].preview(ctx, path="m.py", old_text="a = 1", new_text="a = 2")
    assert preview == "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-a = 1\n+a = 2"
    assert (workspace / "m.py").read_text() == "a = 1\n"
    failing = TOOLS["edit_file"].preview(ctx, path="m.py", old_text="zzz", new_text="y")
    assert failing.startswith("will fail: old_text not found in m.py.")
    requoted = TOOLS["edit_file"].preview(ctx, path="m.py", old_text="a = 1", new_text="a = 'one'")
    assert requoted.endswith("+a = 'one'")  # no quote in old_text: new_text is taken as written
    (workspace / "q.py").write_text('k = "a"\n')
    shown = TOOLS["edit_file"].preview(ctx, path="q.py", old_text="k = 'a'", new_text="k = 'b'")
    assert shown.endswith('-k = "a"\n+k = "b"')  # what is asked for approval is what will be written


@settings(max_examples=300, deadline=None)
@given(
    content=st.text("ab'\"\u2019 \n", max_size=40),
    old=st.text("ab'\"\u2018 ", min_size=1, max_size=8),
    new=st.text("ab'\"", max_size=8),
)
def test_a_quote_match_is_the_files_own_text_and_changes_quote_marks_only(content, old, new):
    matched = _with_file_quotes(content, old, new)
    if matched is None:
        return
    actual, requoted = matched
    assert actual in content and actual.translate(SAME_QUOTE) == old.translate(SAME_QUOTE)
    assert requoted.translate(SAME_QUOTE) == new.translate(SAME_QUOTE)  # only marks changed, none moved
