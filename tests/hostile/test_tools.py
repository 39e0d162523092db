"""Hostile files and arguments for the tools: FIFOs and devices are refused, not opened; numbers
that are NaN, infinite or negative are refused; a backtracking regex is stopped; file names
that are not UTF-8 are shown escaped and never break the session; a command's processes and
the search's children never outlive it."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from typer.testing import CliRunner

from nanohermes.cli import app
from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.builtin import BUILTIN_TOOLS
from nanohermes.tools.search import SEARCH_TIMEOUT_S, Search, find_rg, run_grep, search_with_python, search_with_rg
from nanohermes.workspace import RG_LIST_TIMEOUT_S, rg_files, walk
from tests.support.scripted_server import call, text
from tests.support.timing import HANG_GUARD_S

TOOLS = {t.name: t for t in BUILTIN_TOOLS}
BAD_NAME = os.fsdecode(b"bad\xffname.txt")  # as os.listdir gives it: the byte 0xff as U+DCFF


def tool_results(server, workspace, *calls, args=()):
    """Run the CLI while the model makes `calls`; the tool results the next request carried."""
    server.add(*calls, text("done"))
    r = CliRunner().invoke(app, ["-p", "go", "--yes", "--base-url", server.url, "-C", str(workspace), *args])
    assert (r.exit_code == 0 and r.exception is None) or isinstance(r.exception, SystemExit), (r.stderr, r.exception)
    return [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"]


@pytest.fixture
def ctx(workspace, isolated_home):
    return ToolContext(workspace=workspace, home=isolated_home)


def test_grep_of_a_fifo_in_the_workspace_is_refused_not_blocked(server, workspace):
    os.mkfifo(workspace / "pipe")
    [result] = tool_results(server, workspace, call("grep", {"pattern": "x", "path": "pipe"}))
    assert "pipe is a FIFO (named pipe), not a regular file" in result


def test_grep_of_a_device_outside_the_workspace_is_refused(server, workspace, isolated_home):
    (isolated_home / "config.toml").write_text("allow_outside_workspace = true\n")
    [result] = tool_results(server, workspace, call("grep", {"pattern": "x", "path": "/dev/zero"}))
    assert "/dev/zero is a character device, not a regular file" in result


@pytest.mark.parametrize(
    "name, args",
    [
        ("read_file", {"path": "pipe"}),
        ("edit_file", {"path": "pipe", "old_text": "a", "new_text": "b"}),
        ("write_file", {"path": "pipe", "content": "x"}),
    ],
)
def test_file_tools_refuse_a_fifo(ctx, workspace, name, args):
    os.mkfifo(workspace / "pipe")
    result = dispatch(ctx, TOOLS, name, json.dumps(args))
    assert not result.ok and "not a regular file" in result.content


def test_an_ignore_file_that_is_a_fifo_does_not_hang_grep(ctx, workspace):
    os.mkfifo(workspace / ".gitignore")
    (workspace / "a.txt").write_text("needle\n")
    started = time.monotonic()
    out = run_grep(ctx, "needle", ".", None, False, find_rg())  # the search's own timeout: never raced
    assert "a.txt:1: needle" in out and "the built-in search was used" in out
    assert time.monotonic() - started < SEARCH_TIMEOUT_S  # the FIFO was seen first, not waited out


def test_an_ignore_file_that_is_a_fifo_does_not_hang_the_workspace_listing(workspace):
    """rg blocks for ever on a FIFO .gitignore: its file list (the overview's, glob's) gives up at
    its deadline, and the walk, which never opens one, lists the files instead."""
    os.mkfifo(workspace / ".gitignore")
    (workspace / "a.txt").write_text("x\n")
    started = time.monotonic()
    assert rg_files(find_rg(), workspace, None, limit=10) is None
    assert rg_files(find_rg(), workspace, None) is None
    assert time.monotonic() - started < RG_LIST_TIMEOUT_S  # the FIFO was seen first, not waited out
    assert [rel for rel, _ in walk(workspace, workspace)] == ["a.txt"]


@pytest.mark.parametrize(
    "name, args, says",
    [
        ("run_command", '{"command": "sleep 120", "timeout": NaN}', "must be a finite number"),
        ("run_command", '{"command": "sleep 120", "timeout": Infinity}', "must be a finite number"),
        ("run_command", '{"command": "sleep 120", "timeout": -1}', "must not be negative"),
        ("read_file", '{"path": "a.txt", "limit": -5}', "must not be negative"),
        ("read_file", '{"path": "a.txt", "offset": 2.5}', "must be a whole number"),
        ("web_fetch", '{"url": "http://example.com", "max_chars": -1}', "must not be negative"),
    ],
    ids=["nan-timeout", "inf-timeout", "negative-timeout", "negative-limit", "fractional-offset", "negative-max-chars"],
)
def test_numeric_arguments_that_are_nan_infinite_or_negative_are_refused(ctx, workspace, name, args, says):
    (workspace / "a.txt").write_text("x\n")
    started = time.monotonic()
    result = dispatch(ctx, TOOLS, name, args)
    assert not result.ok and says in result.content
    assert time.monotonic() - started < HANG_GUARD_S  # refused, not run: the sleep is two minutes


def test_the_builtin_search_stops_a_pattern_that_backtracks_for_ever(ctx, workspace):
    (workspace / "a.txt").write_text("a" * 40 + "b\n")
    started = time.monotonic()
    result = dispatch(ctx, {"grep": TOOLS["grep"]}, "grep", json.dumps({"pattern": "(a+)+$"}))
    assert result.ok  # rg never backtracks
    with pytest.raises(Exception, match="backtrack without end"):
        run_grep(ctx, "(a+)+$", ".", None, False, rg=None, timeout=1)  # started late or not: stopped at 1 s
    assert time.monotonic() - started < HANG_GUARD_S  # the pattern alone would run for ever


@pytest.mark.parametrize("engine", ["rg", "python"])
def test_a_file_name_that_is_not_utf8_is_shown_escaped_and_the_session_stays_valid(
    server, workspace, isolated_home, monkeypatch, engine
):
    import nanohermes.tools.search as search

    if engine == "python":
        monkeypatch.setattr(search, "find_rg", lambda: None)
    (workspace / BAD_NAME).write_text("needle\n")
    results = tool_results(
        server,
        workspace,
        call("glob", {"pattern": "**/*"}),
        call("grep", {"pattern": "needle"}),
        call("read_file", {"path": "bad_name.txt"}),
        call("read_file", {"path": "bad\\xffname.txt"}),
        args=["--session", "names"],
    )
    assert "bad\\xffname.txt" in results[0] and "bad\\xffname.txt:1: needle" in results[1]
    assert "Closest existing paths: bad\\xffname.txt" in results[2] and "1\tneedle" in results[3]
    saved = (isolated_home / "sessions" / "names.jsonl").read_bytes().decode("utf-8")  # whole and UTF-8
    assert saved.count("bad\\\\xffname.txt") >= 4


def test_write_file_to_a_path_with_a_lone_surrogate_or_a_final_slash_is_refused(server, workspace):
    results = tool_results(
        server,
        workspace,
        call("write_file", '{"path": "a\\udcffb.txt", "content": "x"}'),
        call("write_file", {"path": "newdir/", "content": "x"}),
    )
    assert "holds a lone surrogate code point" in results[0]
    assert "newdir/ ends in /, so it names a directory" in results[1]
    assert os.listdir(workspace) == []


def test_a_commands_background_processes_end_with_it(ctx, workspace):
    result = dispatch(ctx, TOOLS, "run_command", json.dumps({"command": "sleep 30 & echo $! > bg.pid; echo started"}))
    assert result.ok and "started" in result.content
    assert _gone(int((workspace / "bg.pid").read_text()))


def _gone(pid: int, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    return True  # killed; only the reaping is left to init
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.05)
    return False


def _interrupt_after(seconds: float):
    def raise_interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, raise_interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    return previous


@pytest.mark.parametrize("engine", ["rg", "python"])
def test_an_interrupted_search_leaves_no_child_running(workspace, tmp_path, engine):
    """Ctrl-C reaching only the agent (not its process group) while a search runs."""
    slow_rg = tmp_path / "rg"  # stands in for an rg that takes long (a huge tree)
    slow_rg.write_text("#!/bin/sh\nexec sleep 31\n")
    slow_rg.chmod(0o755)
    (workspace / "a.txt").write_text("a" * 40 + "b\n")
    previous = _interrupt_after(1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            if engine == "rg":
                search_with_rg(str(slow_rg), Search("x", workspace, workspace))
            else:
                search_with_python(Search("(a+)+$", workspace, workspace, timeout=30))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not _children_running(b"sleep\x0031" if engine == "rg" else b"nanohermes.tools.pysearch")


def _children_running(marker: bytes) -> list[int]:
    """This process's children (not zombies) whose command line holds `marker`."""
    mine = str(os.getpid()).encode()
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if fields[1] == mine and fields[0] != b"Z" and marker in cmdline:
            found.append(int(pid))
    return found


def test_a_function_the_model_wrote_on_one_line_is_edited_in_one_request(server, workspace):
    # Qwen2.5-Coder-1.5B sent this edit, was refused ("whitespace is not forgiven") and alternated
    # read_file and the same edit for 45 requests; one place matches it, so it lands at once.
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    edit = {"path": "calc.py", "old_text": "def add(a, b): return a - b", "new_text": "def add(a, b): return a + b"}
    [result] = tool_results(server, workspace, call("edit_file", edit))
    assert result.startswith("edit_file calc.py: replaced 1 occurrence (line 1; old_text matched ignoring whitespace")
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert len(server.chat_requests()) == 2  # the edit, then the answer


def test_an_edit_that_matches_two_places_loosely_changes_neither(server, workspace):
    content = "class A:\n    def f(self):\n        return 1\n\nclass B:\n    def f(self):\n        return 1\n"
    (workspace / "m.py").write_text(content)
    edit = {"path": "m.py", "old_text": "def f(self):\n    return 1", "new_text": "def f(self):\n    return 2"}
    [result] = tool_results(server, workspace, call("edit_file", edit))
    assert "loosely it matches 2 places (lines 2, 6), so nothing was changed" in result
    assert (workspace / "m.py").read_text() == content
