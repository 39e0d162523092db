"""Finding and resuming sessions through the CLI: listing, --continue, rm, prune, recaps,
and session files written before sessions recorded their workspace and title."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from nanohermes.cli import app
from nanohermes.storage.session import Session
from tests.support.scripted_server import call, text

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

DAY_S = 86_400


def cli(*args, cwd=None, input=None):
    """`nanohermes ARGS` in this process, from directory `cwd`."""
    old = os.getcwd()
    os.chdir(cwd or old)
    try:
        result = CliRunner().invoke(app, list(args), input=input)
    finally:
        os.chdir(old)
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout, stderr=result.stderr)


def ask(server, workspace, task, *flags):
    return cli("-p", task, "--base-url", server.url, *flags, cwd=workspace)


@pytest.fixture
def two_workspaces(tmp_path):
    a, b = tmp_path / "alpha", tmp_path / "beta"
    a.mkdir()
    b.mkdir()
    return a.resolve(), b.resolve()


def test_sessions_lists_this_workspaces_sessions_with_title_counts_and_size(server, two_workspaces):
    alpha, beta = two_workspaces
    server.handler = lambda body: text("done")
    ask(server, alpha, "fix the flaky parser test in tests/test_parse.py", "--session", "parser")
    ask(server, beta, "write the changelog", "--session", "notes")
    here = cli("sessions", cwd=alpha)
    assert here.returncode == 0
    header, row, footer = here.stdout.splitlines()
    assert header.split()[:4] == ["NAME", "MSGS", "SIZE", "LAST"] and header.rstrip().endswith("TITLE")
    assert row.startswith("parser") and " 2 " in row and "fix the flaky parser" in row and "alpha" in row
    assert "notes" not in here.stdout
    assert footer == f"1 session(s) in {alpha} · 1 more elsewhere: nanohermes sessions --all"
    everything = cli("sessions", "--all", cwd=alpha).stdout
    assert "parser" in everything and "notes" in everything and "write the changelog" in everything


def test_continue_resumes_the_most_recent_session_of_this_workspace(server, two_workspaces):
    alpha, beta = two_workspaces
    server.handler = lambda body: text(f"answer {len(server.chat_requests())}")
    ask(server, alpha, "first in alpha", "--session", "a1")
    ask(server, beta, "first in beta", "--session", "b1")  # more recent, but elsewhere
    r = ask(server, alpha, "follow-up", "-c")
    assert r.returncode == 0, r.stderr
    sent = [m["content"] for m in server.chat_requests()[-1]["messages"][1:]]
    assert sent == ["first in alpha", "answer 1", "follow-up"]
    assert "resumed session a1 (2 messages)" in r.stderr
    assert "last request: first in alpha" in r.stderr and "last answer: answer 1" in r.stderr


def test_continue_with_no_session_here_says_what_to_do(server, workspace):
    r = ask(server, workspace, "hi", "-c")
    assert r.returncode == 1 and "No saved session of" in r.stderr and "--session NAME" in r.stderr
    assert server.chat_requests() == []


def test_continue_and_session_together_is_a_usage_error(server, workspace):
    assert ask(server, workspace, "hi", "-c", "--session", "x").returncode == 2


def test_sessions_rm_removes_named_sessions_and_reports_unknown_ones(server, workspace, isolated_home):
    server.handler = lambda body: text("ok")
    for name in ("keep", "drop1", "drop2"):
        ask(server, workspace, "hello", "--session", name)
    r = cli("sessions", "rm", "drop1", "drop2", "ghost", cwd=workspace)
    assert r.returncode == 1 and "removed drop1" in r.stdout and "removed drop2" in r.stdout
    assert "No session named 'ghost'" in r.stderr
    assert sorted(p.name for p in (isolated_home / "sessions").iterdir()) == ["keep.jsonl", "keep.jsonl.lock"]


def test_sessions_rm_leaves_a_session_in_use_alone(workspace, isolated_home):
    with Session(isolated_home, "busy", workspace=workspace) as s:
        s.record_message({"role": "user", "content": "working"})
        r = cli("sessions", "rm", "busy", cwd=workspace)
        assert r.returncode == 1 and "in use by another nanohermes process" in r.stderr
        assert s.path.exists()


def test_prune_removes_only_sessions_last_used_before_the_age(server, workspace, isolated_home):
    server.handler = lambda body: text("ok")
    for name in ("old", "recent"):
        ask(server, workspace, "hello", "--session", name)
    month_ago = time.time() - 31 * DAY_S
    os.utime(isolated_home / "sessions" / "old.jsonl", (month_ago, month_ago))
    dry = cli("sessions", "prune", "--older-than", "30d", "--dry-run", cwd=workspace)
    assert "would remove old" in dry.stdout and (isolated_home / "sessions" / "old.jsonl").exists()
    r = cli("sessions", "prune", "--older-than", "30d", cwd=workspace)
    assert r.returncode == 0 and "removed old" in r.stdout and "recent" not in r.stdout
    assert not (isolated_home / "sessions" / "old.jsonl").exists()
    assert (isolated_home / "sessions" / "recent.jsonl").exists()


def test_prune_rejects_an_age_without_a_unit(workspace):
    r = cli("sessions", "prune", "--older-than", "30", cwd=workspace)
    assert r.returncode == 2 and "e.g. 30d" in r.stderr


def test_session_files_from_before_workspaces_and_titles_still_list_and_load(server, workspace, isolated_home):
    folder = isolated_home / "sessions"
    folder.mkdir(parents=True)
    events = [
        {"type": "meta", "version": 1, "created": 1.0},
        {"type": "message", "message": {"role": "user", "content": "an old   request\nover two lines"}},
        {"type": "message", "message": {"role": "assistant", "content": "an old answer"}},
    ]
    (folder / "legacy.jsonl").write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events))
    listing = cli("sessions", "--all", cwd=workspace).stdout
    row = next(line for line in listing.splitlines() if line.startswith("legacy"))
    assert " 2 " in row and " ? " in row and "an old request over two lines" in row
    assert "no saved sessions in" in cli("sessions", cwd=workspace).stdout  # its workspace is unknown
    server.add(text("new answer"))
    r = ask(server, workspace, "next", "--session", "legacy")
    assert r.returncode == 0 and "last request: an old request over two lines" in r.stderr
    assert [m["content"] for m in server.chat_requests()[0]["messages"][1:]] == [
        "an old   request\nover two lines",
        "an old answer",
        "next",
    ]
    assert " 4 " in next(
        line for line in cli("sessions", "--all", cwd=workspace).stdout.splitlines() if line.startswith("legacy")
    )


def test_listing_a_huge_session_reads_only_its_first_and_last_lines(workspace, isolated_home):
    with Session(isolated_home, "huge", workspace=workspace) as s:
        s.record_message({"role": "user", "content": "make a big file"})
        s.record_message({"role": "assistant", "content": "x" * 40 * 2**20})  # 40 MB, more than any scan reads
    before = bytes_read()
    r = cli("sessions", cwd=workspace)
    read = bytes_read() - before
    row = r.stdout.splitlines()[1]
    assert row.startswith("huge") and " 2 " in row and "40.0 MB" in row and "make a big file" in row
    assert read < 4 * 2**20, read  # counted, not timed: a loaded laptop is slow, not wrong


def bytes_read() -> int:
    """What this process has read so far, by the kernel's count (/proc/self/io: rchar)."""
    with open("/proc/self/io") as io:
        return int(next(line for line in io if line.startswith("rchar:")).split()[1])


def test_a_crashed_huge_session_lists_its_count_as_unknown_but_keeps_its_title(workspace, isolated_home):
    with Session(isolated_home, "crashed", workspace=workspace) as s:
        s.record_message({"role": "user", "content": "long job"})
        s.record_message({"role": "assistant", "content": "y" * 40 * 2**20})
    path = isolated_home / "sessions" / "crashed.jsonl"
    path.write_bytes(path.read_bytes().rsplit(b'{"type":"stats"', 1)[0])  # no clean close
    row = cli("sessions", cwd=workspace).stdout.splitlines()[1]
    assert row.startswith("crashed") and "     ? " in row and "long job" in row


def test_resuming_a_compacted_session_recaps_the_summarys_goal(server, workspace, isolated_home):
    from nanohermes.context.summary import summary_message

    summary = summary_message("Goal: migrate the CLI from argparse to typer.\nCompleted actions:\n- read cli.py")
    first = {"role": "user", "content": "start the migration"}
    with Session(isolated_home, "long", workspace=workspace) as s:
        s.record_message(first)
        s.record_compaction(
            [first],
            [summary, {"role": "user", "content": "now the tests"}, {"role": "assistant", "content": "tests pass"}],
            {},
        )
    server.add(text("ok"))
    r = ask(server, workspace, "anything left?", "-c")
    assert "goal: migrate the CLI from argparse to typer." in r.stderr
    assert "last request: now the tests" in r.stderr and "last answer: tests pass" in r.stderr


def test_sessions_and_version_do_not_load_the_model_client_or_terminal_ui(workspace):
    code = (
        "import sys; sys.argv=['nanohermes','sessions','--all']\nfrom nanohermes.cli import main\n"
        "try: main()\nexcept SystemExit: pass\n"
        "print(sorted(m for m in ('openai', 'rich', 'prompt_toolkit', 'tiktoken') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=workspace, capture_output=True, text=True).stdout
    assert out.splitlines()[-1] == "[]"


@pytest.mark.parametrize("columns", [60, 100, 120])
def test_sessions_titles_are_cut_to_the_terminal_width_and_no_row_overflows(server, workspace, columns):
    import pexpect

    server.handler = lambda body: text("done")
    long_title = "refactor the parser so that every error message names the line and column it came from " * 2
    ask(server, workspace, long_title, "--session", "long-one")
    ask(server, workspace, "修复解析器中的错误并为每个错误信息添加行号和列号，然后更新所有测试", "--session", "wide")
    child = pexpect.spawn(
        os.path.join(os.path.dirname(sys.executable), "nanohermes"),
        ["sessions"],
        cwd=str(workspace),
        env={k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")},
        encoding="utf-8",
        dimensions=(30, columns),
        timeout=20,
    )
    child.expect(pexpect.EOF)
    rows = [line for line in child.before.replace("\r", "").splitlines() if line.strip()]
    from nanohermes.ui.session_list import cell_width

    listed = [row for row in rows if row.startswith(("long-one", "wide", "NAME"))]
    assert len(listed) == 3 and all(cell_width(row) <= columns for row in listed), rows
    long_row = next(row for row in listed if row.startswith("long-one"))
    assert long_row.endswith("…") and "refactor the parser" in long_row  # the title shows, cut


def test_p_rewinds_a_session_forks_it_and_rm_takes_its_checkpoints(server, workspace, isolated_home):
    server.add(call("run_command", {"command": "echo one > x.txt"}), text("made"), text("again"), text("forked"))
    assert ask(server, workspace, "make x", "--session", "s1", "--yes").returncode == 0
    assert (workspace / "x.txt").exists()
    rewound = ask(server, workspace, "again", "--session", "s1", "--rewind", "1:code", "--yes")
    assert rewound.returncode == 0 and "rewound code to before: make x" in rewound.stderr
    assert not (workspace / "x.txt").exists()  # the command's file is gone
    assert ask(server, workspace, "hi", "--fork", "s1", "--session", "s2").returncode == 0
    listing = cli("sessions", cwd=workspace).stdout
    assert "(fork of s1)" in listing and "s1 " in listing  # the family, and the original still there
    assert list((isolated_home / "checkpoints" / "s2").glob("workspace-*.jsonl"))  # the snapshots came along
    assert cli("sessions", "rm", "s2", cwd=workspace).returncode == 0
    assert not (isolated_home / "checkpoints" / "s2").exists()
    fresh = ask(server, workspace, "x", "--rewind", "1")  # a new session has nothing to rewind: said, nothing run
    assert fresh.returncode == 1 and "no request 1 back: this session has 0" in fresh.stderr
