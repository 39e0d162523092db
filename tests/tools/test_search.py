"""grep (ripgrep and the pure-Python fallback, which must agree) and glob, on real trees."""

import os

import pytest

from nanohermes.errors import ToolError
from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.builtin import BUILTIN_TOOLS
from nanohermes.tools.search import MAX_SEARCH_FILE_BYTES, find_rg, glob, run_grep

TOOLS = {t.name: t for t in BUILTIN_TOOLS}


@pytest.fixture
def ctx(workspace, isolated_home):
    return ToolContext(workspace=workspace, home=isolated_home, max_output=1_000_000)


@pytest.fixture(params=["rg", "python"])
def grep(request, ctx):
    """grep with either engine: every behaviour below must hold for both."""
    rg = find_rg() if request.param == "rg" else None
    if request.param == "rg" and rg is None:
        pytest.skip("rg not installed")

    def run(pattern, path=".", glob=None, ignore_case=False):
        return run_grep(ctx, pattern, path, glob, ignore_case, rg)

    return run


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text) if isinstance(text, str) else path.write_bytes(text)
    return path


def test_rg_is_found_beside_the_venv_python():
    assert find_rg() is not None and os.access(find_rg(), os.X_OK)


def test_grep_prints_path_line_text_relative_to_the_workspace(grep, workspace):
    write(workspace / "src" / "a.py", "import os\ndef handler():\n    pass\n")
    write(workspace / "b.txt", "no handler here? yes: handler\n")
    assert grep("handler") == (
        "grep 'handler' in .: 2 matches in 2 files\nb.txt:1: no handler here? yes: handler\nsrc/a.py:2: def handler():"
    )
    assert grep("handler", path="src") == "grep 'handler' in src: 1 match in 1 file\nsrc/a.py:2: def handler():"


def test_grep_with_no_match_says_so(grep, workspace):
    write(workspace / "a.txt", "abc\n")
    assert grep("zzz").splitlines()[0] == "grep 'zzz' in .: no matches"


def test_grep_of_exactly_200_matches_has_no_stop_note(grep, workspace):
    write(workspace / "m.txt", "hit\n" * 200)
    out = grep("hit")
    assert out.startswith("grep 'hit' in .: 200 matches in 1 file\n")
    assert "stopped" not in out and out.count("\n") == 200


def test_grep_stops_after_200_matches_and_says_so(grep, workspace):
    write(workspace / "m.txt", "hit\n" * 150)
    write(workspace / "n.txt", "hit\n" * 51)
    out = grep("hit").split("\n")
    assert out[0].startswith("grep 'hit' in .: first 200 matches in ")
    assert len(out) == 202 and out[-1] == "… stopped after 200 matches"


def test_grep_cuts_lines_longer_than_240_chars(grep, workspace):
    write(workspace / "l.txt", "k" + "a" * 239 + "\n" + "k" + "b" * 240 + "\n")
    lines = grep("k").split("\n")
    assert lines[1] == "l.txt:1: k" + "a" * 239
    assert lines[2] == "l.txt:2: k" + "b" * 239 + " …[line cut at 240 chars]"


def test_grep_searches_a_file_of_exactly_1_mb_and_skips_one_byte_more(grep, workspace):
    write(workspace / "at.txt", b"needle\n" + b"a" * (MAX_SEARCH_FILE_BYTES - 7))
    write(workspace / "over.txt", b"needle\n" + b"a" * (MAX_SEARCH_FILE_BYTES - 6))
    assert (workspace / "at.txt").stat().st_size == MAX_SEARCH_FILE_BYTES
    assert grep("needle") == "grep 'needle' in .: 1 match in 1 file\nat.txt:1: needle"


def test_grep_of_an_explicit_big_or_binary_file_says_why_it_is_skipped(grep, workspace):
    write(workspace / "over.txt", b"needle\n" + b"a" * MAX_SEARCH_FILE_BYTES)
    write(workspace / "blob.bin", b"needle\x00\n")
    with pytest.raises(ToolError, match=r"over.txt is 1048583 bytes; grep skips files over 1048576 bytes"):
        grep("needle", path="over.txt")
    with pytest.raises(ToolError, match=r"blob\.bin is a binary file"):
        grep("needle", path="blob.bin")


def test_grep_skips_binary_files_in_a_tree(grep, workspace):
    write(workspace / "blob.bin", b"needle\x00\x01\x02\n")
    write(workspace / "text.txt", "needle\n")
    assert grep("needle") == "grep 'needle' in .: 1 match in 1 file\ntext.txt:1: needle"


def test_grep_honours_gitignore_skips_git_and_searches_hidden_files(grep, workspace):
    write(workspace / ".gitignore", "dist/\n*.gen.py\n")
    write(workspace / "dist" / "bundle.js", "needle\n")
    write(workspace / "x.gen.py", "needle\n")
    write(workspace / ".git" / "HEAD", "needle\n")
    write(workspace / ".github" / "ci.yml", "needle\n")
    write(workspace / "sub" / ".gitignore", "local.txt\n")
    write(workspace / "sub" / "local.txt", "needle\n")
    write(workspace / "sub" / "kept.txt", "needle\n")
    assert grep("needle").split("\n")[1:] == [".github/ci.yml:1: needle", "sub/kept.txt:1: needle"]


def test_grep_glob_filter_and_ignore_case(grep, workspace):
    write(workspace / "a.py", "Needle\n")
    write(workspace / "b.md", "needle\n")
    write(workspace / "sub" / "c.py", "NEEDLE\n")
    assert grep("needle", glob="*.py").splitlines()[0] == "grep 'needle' in ., glob '*.py': no matches"
    assert grep("needle", glob="*.py", ignore_case=True).split("\n")[1:] == ["a.py:1: Needle", "sub/c.py:1: NEEDLE"]
    assert grep("needle", glob="sub/*.py", ignore_case=True).split("\n")[1:] == ["sub/c.py:1: NEEDLE"]


def test_grep_of_a_named_file_searches_it_even_if_ignored_or_filtered(grep, workspace):
    write(workspace / ".gitignore", "*.log\n")
    write(workspace / "app.log", "needle\n")
    assert (
        grep("needle", path="app.log", glob="*.py")
        == "grep 'needle' in app.log, glob '*.py': 1 match in 1 file\napp.log:1: needle"
    )


def test_grep_bad_regex_is_a_clear_error(grep, workspace):
    write(workspace / "a.py", "f(x)\n")
    with pytest.raises(ToolError, match=r"^grep could not search for 'f\(x':"):
        grep("f(x")


def test_grep_reports_line_numbers_like_rg_despite_odd_line_separators(grep, workspace):
    write(workspace / "a.txt", "one\x0ctwo\r\nthree needle\n")
    assert grep("needle") == "grep 'needle' in .: 1 match in 1 file\na.txt:2: three needle"


def test_grep_through_dispatch_is_clamped_with_a_note(workspace, isolated_home):
    ctx = ToolContext(workspace=workspace, home=isolated_home, max_output=2_000)
    write(workspace / "m.txt", ("needle " + "x" * 200 + "\n") * 50)
    result = dispatch(ctx, TOOLS, "grep", {"pattern": "needle"})
    assert result.ok and "… output truncated (" in result.content
    assert len(result.content.encode()) < 2_100


def test_grep_path_outside_the_workspace_is_refused(ctx):
    result = dispatch(ctx, TOOLS, "grep", {"pattern": "root", "path": "/etc"})
    assert not result.ok and "outside the workspace" in result.content


# ---------------------------------------------------------------- glob


def files_with_mtimes(workspace, names):
    for age, name in enumerate(names):
        path = write(workspace / name, "x\n")
        os.utime(path, (1_000_000_000 - age * 10, 1_000_000_000 - age * 10))


def test_glob_lists_newest_first_with_a_count(ctx, workspace):
    files_with_mtimes(workspace, ["new.py", "mid/b.py", "old.py", "note.md"])
    assert glob.func(ctx, pattern="**/*.py") == "glob '**/*.py' in .: 3 files, newest first\nnew.py\nmid/b.py\nold.py"


def test_glob_star_matches_the_base_directory_only_and_hints_at_double_star(ctx, workspace):
    files_with_mtimes(workspace, ["top.py", "sub/deep.py"])
    assert glob.func(ctx, pattern="*.py") == "glob '*.py' in .: 1 file, newest first\ntop.py"
    assert glob.func(ctx, pattern="*.rs").splitlines()[0] == (
        "glob '*.rs' in .: no files match (patterns start at the base directory: use **/*.rs to search subdirectories)"
    )


def test_glob_path_sets_the_base_and_results_stay_workspace_relative(ctx, workspace):
    files_with_mtimes(workspace, ["pkg/a.py", "pkg/sub/b.py", "c.py"])
    assert glob.func(ctx, pattern="*.py", path="pkg") == "glob '*.py' in pkg: 1 file, newest first\npkg/a.py"


def test_glob_honours_gitignore_and_lists_files_only(ctx, workspace):
    write(workspace / ".gitignore", "build/\n")
    files_with_mtimes(workspace, ["build/gen.py", "src/app.py"])
    assert glob.func(ctx, pattern="**/*") == "glob '**/*' in .: 2 files, newest first\n.gitignore\nsrc/app.py"


def test_glob_expands_braces(ctx, workspace):
    files_with_mtimes(workspace, ["a.py", "b.md", "c.txt"])
    assert glob.func(ctx, pattern="*.{py,md}").split("\n")[1:] == ["a.py", "b.md"]


def test_glob_of_exactly_500_files_lists_all(ctx, workspace):
    for i in range(500):
        write(workspace / f"f{i:03}.txt", "")
    out = glob.func(ctx, pattern="*.txt").split("\n")
    assert out[0] == "glob '*.txt' in .: 500 files, newest first" and len(out) == 501


def test_glob_caps_at_500_files_and_says_so(ctx, workspace):
    for i in range(501):
        write(workspace / f"f{i:03}.txt", "")
    out = glob.func(ctx, pattern="*.txt").split("\n")
    assert out[0] == "glob '*.txt' in .: 501 files, newest first"
    assert len(out) == 502 and out[-1] == "… capped at 500 files"


def test_glob_of_a_file_path_is_a_clear_error(ctx, workspace):
    write(workspace / "a.py", "")
    with pytest.raises(ToolError, match=r"a\.py is not a directory"):
        glob.func(ctx, pattern="*", path="a.py")


@pytest.mark.parametrize("engine", ["rg", "python"])
def test_grep_and_glob_never_show_nanohermes_home_inside_the_workspace(workspace, engine):
    from nanohermes.tools import ToolContext
    from nanohermes.tools.search import find_rg, glob, run_grep

    home = workspace / ".nanohermes"
    (home / "sessions").mkdir(parents=True)
    (home / "config.toml").write_text('api_key = "sk-SECRET123"\n')
    (home / "sessions" / "s.jsonl").write_text("SECRET in a session\n")
    (workspace / "app.py").write_text("# no SECRET here? yes: SECRET\n")
    (workspace / "sub" / ".nanohermes").mkdir(parents=True)
    (workspace / "sub" / ".nanohermes" / "notes.txt").write_text("SECRET of a project folder with the same name\n")
    ctx = ToolContext(workspace=workspace, home=home)
    out = run_grep(ctx, "SECRET", ".", None, False, find_rg() if engine == "rg" else None)
    assert "app.py" in out and "sub/.nanohermes/notes.txt" in out
    assert "sk-SECRET123" not in out and "s.jsonl" not in out and "config.toml" not in out
    listing = glob.func(ctx, "**/*")
    assert "config.toml" not in listing and "app.py" in listing


def test_glob_gives_the_same_answer_with_and_without_rg(ctx, workspace, monkeypatch):
    import nanohermes.tools.search as search

    write(workspace / ".gitignore", "build/\n*.log\n")
    write(workspace / "pkg" / ".gitignore", "secret.py\n")
    for name in ["a.py", "b.md", "build/x.py", "x.log", "pkg/ok.py", "pkg/secret.py", "pkg/deep/c.py", ".hidden/h.py"]:
        write(workspace / name, "x\n")
    patterns = ["**/*.py", "*.py", "pkg/**", "**/*.{py,md}", "**/*"]
    with_rg = [glob.func(ctx, pattern=p) for p in patterns]
    monkeypatch.setattr(search, "find_rg", lambda: None)
    assert [glob.func(ctx, pattern=p) for p in patterns] == with_rg
    assert "build/x.py" not in with_rg[0] and "pkg/secret.py" not in with_rg[0] and "pkg/deep/c.py" in with_rg[0]
