"""Empty searches and missing paths that say what does exist (tools/steering.py, workspace.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.builtin import BUILTIN_TOOLS
from nanohermes.tools.steering import (
    NOTE_MAX_CHARS,
    READ_FIRST,
    glob_miss_note,
    grep_miss_note,
    missing_path_note,
    named_files,
    no_tests_note,
    raised_in_note,
    silent_command_note,
    workspace_files,
)
from nanohermes.workspace import Listing, list_workspace

TOOLS = {t.name: t for t in BUILTIN_TOOLS}


@pytest.fixture
def ctx(workspace, isolated_home):
    return ToolContext(workspace=workspace, home=isolated_home)


def write(path: Path, text: str = "x\n") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def run(ctx: ToolContext, name: str, **args) -> str:
    return dispatch(ctx, TOOLS, name, args).content


def port_workspace(workspace: Path) -> None:
    write(workspace / "config" / "settings.ini", "[server]\nport = 8443\n")
    write(workspace / "README.md", "# svc\n")


def test_grep_whose_glob_matches_no_file_names_the_files_that_exist_and_says_to_read(ctx, workspace):
    port_workspace(workspace)
    out = run(ctx, "grep", pattern="server port", glob="*.py")
    assert out.splitlines()[0] == "grep 'server port' in ., glob '*.py': no matches"
    assert "No file matches glob '*.py'." in out
    assert "config/settings.ini" in out and "README.md" in out
    assert out.endswith(READ_FIRST)


def test_grep_with_no_matching_line_suggests_one_word_and_lists_a_small_workspace(ctx, workspace):
    port_workspace(workspace)
    out = run(ctx, "grep", pattern="server port")
    assert "No line of the 2 files searched matches. A regex matches within one line" in out
    assert "The workspace has 2 files:" in out and "config/settings.ini" in out


def test_glob_that_matches_nothing_lists_the_small_workspace(ctx, workspace):
    port_workspace(workspace)
    out = run(ctx, "glob", pattern="**/*.py")
    assert out.splitlines() == [
        "glob '**/*.py' in .: no files match",
        "The workspace has 2 files: README.md, config/settings.ini. " + READ_FIRST,
    ]


def test_read_of_a_missing_path_lists_the_small_workspace(ctx, workspace):
    port_workspace(workspace)
    out = run(ctx, "read_file", path="settings.py")
    assert out.startswith("error: settings.py does not exist. Closest existing paths: config/settings.ini.")
    assert "The workspace has 2 files: config/settings.ini, README.md." in out  # the related name first


def test_a_command_that_fails_without_a_word_lists_the_small_workspace(ctx, workspace):
    """Asked which port a service uses, Qwen2.5-Coder-1.5B ran `netstat -tuln | grep '8080'`,
    got exit 1 and nothing else, and answered from imagination."""
    port_workspace(workspace)
    out = run(ctx, "run_command", command="grep -rq 8080 README.md")
    assert out.splitlines() == [
        "$ grep -rq 8080 README.md",
        "exit code 1",
        "(no output)",
        "It printed nothing. The workspace has 2 files: README.md, config/settings.ini. " + READ_FIRST,
    ]


@pytest.mark.parametrize("command", ["true", "ls nothing-here", "echo found; exit 1"])
def test_a_command_that_succeeds_or_says_why_it_failed_gets_no_note(ctx, workspace, command):
    port_workspace(workspace)
    assert READ_FIRST not in run(ctx, "run_command", command=command)


def test_a_grep_of_one_file_that_misses_names_the_files_it_names_first(ctx, workspace):
    """Qwen2.5-Coder-1.5B grepped service/app.py for the port it had guessed; told that the
    file names config/settings.ini, it read that file next (3 of 4 tries; listed after
    README.md, it read README.md)."""
    port_workspace(workspace)
    write(workspace / "service" / "app.py", "from pathlib import Path\nPath('config') / 'settings.ini'\n")
    out = run(ctx, "grep", pattern="8080", path="service/app.py")
    assert out.splitlines()[1] == (
        "No line of service/app.py matches. Files it names: config/settings.ini. Other files: README.md. " + READ_FIRST
    )


def test_named_files_are_file_names_and_module_paths_mentioned_in_the_text():
    files = ("README.md", "shop/__init__.py", "shop/pricing.py", "shop/cart.py", "config/settings.ini", "a.py")
    text = "from shop.pricing import vat_for\nimport shop\nread('settings.ini')  # see a.py\n"
    assert named_files(text, files, "shop/cart.py") == [
        "shop/pricing.py",
        "config/settings.ini",
    ]  # a.py: too short a name to trust
    assert named_files("see shop/cart.py", files, "shop/cart.py") == []  # not the searched file itself


def test_a_failed_python_run_says_where_the_error_was_raised_in_the_workspace(ctx, workspace):
    write(workspace / "shop" / "pricing.py", "RATES = {}\n\ndef vat(c):\n    return RATES[c.upper()]\n")
    write(workspace / "test_shop.py", "import json\nfrom shop.pricing import vat\njson.loads('{')\n")
    out = run(ctx, "run_command", command=f"{sys.executable} test_shop.py")
    assert out.endswith("Next, read test_shop.py with read_file: the error was raised there, at line 3 (in <module>).")
    write(workspace / "test_shop.py", "from shop.pricing import vat\nvat('food')\n")
    out = run(ctx, "run_command", command=f"{sys.executable} test_shop.py")
    assert out.endswith("Next, read shop/pricing.py with read_file: the error was raised there, at line 4 (in vat).")


def test_a_test_run_that_ran_no_test_says_it_proves_nothing(ctx, workspace):
    """unittest's discovery wants test*.py: beside leap_test.py `python -m unittest` runs nothing and
    says OK; a small model read that as a pass. A real run of each, through the real tool."""
    write(workspace / "leap.py", "def leap_year(year):\n    return False\n")
    write(
        workspace / "leap_test.py",
        "import unittest\nfrom leap import leap_year\n\n\nclass T(unittest.TestCase):\n"
        "    def test_2000(self):\n        self.assertTrue(leap_year(2000))\n",
    )
    out = run(ctx, "run_command", command=f"{sys.executable} -m unittest")
    assert "Ran 0 tests" in out and out.endswith(no_tests_note("Ran 0 tests in 0.000s"))
    assert "No test ran: this says nothing about the code" in out
    for pytest_says in ("no tests ran in 0.01s", "===== no tests ran in 0.01s =====", "collected 0 items"):
        assert no_tests_note(pytest_says)
    named = run(ctx, "run_command", command=f"{sys.executable} -m unittest leap_test")
    assert "Ran 1 test" in named and "FAILED" in named and "No test ran" not in named


def test_a_traceback_outside_the_workspace_names_nothing(workspace):
    trace = 'Traceback (most recent call last):\n  File "/usr/lib/python3.11/json/decoder.py", line 353, in raw_decode\nValueError: x\n'
    assert raised_in_note(trace, workspace) == ""
    assert raised_in_note("exit code 1\nsomething failed", workspace) == ""


def test_steering_notes_honour_gitignore(ctx, workspace):
    port_workspace(workspace)
    write(workspace / ".gitignore", "build/\n*.log\n")
    write(workspace / "build" / "out.py")
    write(workspace / "debug.log")
    assert list_workspace(workspace).files == (".gitignore", "README.md", "config/settings.ini")
    out = run(ctx, "glob", pattern="**/*.py")
    assert "build/" not in out and "debug.log" not in out


def test_listing_leaves_out_nanohermes_home_inside_the_workspace(workspace):
    write(workspace / "a.py")
    write(workspace / ".nh" / "sessions" / "s.jsonl")
    assert list_workspace(workspace, exclude=workspace / ".nh").files == ("a.py",)


def test_listing_stops_at_its_limit_and_says_it_is_incomplete(workspace):
    for i in range(12):
        write(workspace / f"f{i:02}.txt")
    listing = list_workspace(workspace, limit=10)
    assert len(listing) == 10 and not listing.complete
    assert listing.files == tuple(f"f{i:02}.txt" for i in range(10))  # sorted: the same ten each time


def big_listing() -> Listing:
    files = [f"src/pkg/mod{i}.py" for i in range(60)] + [f"tests/test_mod{i}.py" for i in range(20)]
    files += ["config/settings.ini", "config/logging.ini", "docs/port.md", "README.md"]
    return Listing(tuple(sorted(files)))


def test_in_a_large_workspace_a_glob_miss_names_the_file_types_and_where_they_are():
    note = glob_miss_note(big_listing(), ".", "**/*.toml")
    assert "Files there by type: .py 80 (src/, tests/), .md 2 (., docs/), .ini 2 (config/)." in note
    assert "84 files; most in src/ (60), tests/ (20)" in note
    assert len(note) <= NOTE_MAX_CHARS and note.endswith(READ_FIRST)


def test_in_a_large_workspace_a_glob_miss_names_files_with_the_same_stem():
    note = glob_miss_note(big_listing(), ".", "**/settings.py")
    assert note.startswith("Files named settings.*: config/settings.ini.")


def test_in_a_large_workspace_a_grep_miss_names_files_named_like_the_pattern():
    listing = big_listing()
    note = grep_miss_note(listing, ".", None, listing.under("."), "port")
    assert "Files named like it: docs/port.md." in note


def test_in_a_large_workspace_a_missing_path_names_where_files_of_its_type_are():
    note = missing_path_note(big_listing(), "settings.ini")
    assert note.startswith(".ini files are in config/ (2).")


def test_a_listing_of_a_small_workspace_puts_names_like_the_pattern_first():
    listing = Listing(("a.txt", "b.txt", "config/port.ini"))
    assert workspace_files(listing, "port") == "The workspace has 3 files: config/port.ini, a.txt, b.txt."


paths = st.lists(
    st.from_regex(r"[a-z]{1,12}(/[a-z]{1,12}){0,3}\.[a-z]{1,4}", fullmatch=True), max_size=400, unique=True
)
patterns = st.from_regex(r"[ -~]{0,80}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(files=paths, pattern=patterns)
def test_every_steering_note_is_capped(files, pattern):
    listing = Listing(tuple(sorted(files)), complete=len(files) < 300)
    notes = [
        grep_miss_note(listing, ".", "*.zz", [], pattern),
        grep_miss_note(listing, ".", None, list(listing.files), pattern),
        glob_miss_note(listing, ".", pattern),
        missing_path_note(listing, pattern),
        silent_command_note(listing, pattern),
        grep_miss_note(listing, "x.py", None, ["x.py"], pattern, list(listing.files[:40])),
    ]
    for note in notes:
        assert len(note) <= NOTE_MAX_CHARS


def test_a_word_found_only_inside_longer_words_says_so_and_where_to_look(ctx, workspace):
    write(workspace / "service" / "app.py", "import configparser\nfrom pathlib import Path\n")
    write(workspace / "config" / "settings.ini", "[server]\nport = 8443\n")
    out = run(ctx, "grep", pattern="port", path="service/app.py")
    assert out.endswith(
        "Every match has 'port' inside a longer word; none is the word itself. "
        "Search for \\bport\\b (in the whole workspace: path .) before answering."
    )
    assert "inside a longer word" not in run(ctx, "grep", pattern="port")  # settings.ini has the word itself


def test_a_grep_that_misses_only_by_case_shows_what_is_there(ctx, workspace):
    write(workspace / "config.py", 'RELAY_HOST = "smtp"\nRELAY_PORT = 2525\n')
    out = run(ctx, "grep", pattern="relay_port", path="config.py")
    assert out == (
        "grep 'relay_port' in config.py: no matches\n"
        "It matches when case is ignored (ignore_case=true):\nconfig.py:2: RELAY_PORT = 2525"
    )
