"""Hostile session files and text: a broken file is named, never a crash; nothing the agent
appends can make the writer lose an event; resuming a huge session holds its working set."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from nanohermes.cli import app
from nanohermes.storage.session import Session

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "measure_resume_memory.py"
LINE_SLACK_BYTES = 4 * 2**20  # one event line being decoded (a 240 KB output, its text and objects), page granularity


def test_a_session_whose_tool_calls_are_not_a_list_is_reported_corrupt_and_left_untouched(
    server, workspace, isolated_home
):
    sessions = isolated_home / "sessions"
    sessions.mkdir()
    lines = [
        '{"type":"meta","version":1,"created":1}',
        '{"type":"message","message":{"role":"user","content":"a"}}',
        '{"type":"message","message":{"role":"assistant","content":"","tool_calls":"oops"}}',
    ]
    (sessions / "x.jsonl").write_text("\n".join(lines) + "\n")
    before = (sessions / "x.jsonl").read_bytes()
    r = CliRunner().invoke(app, ["-p", "hi", "--session", "x", "--base-url", server.url, "-C", str(workspace)])
    assert r.exit_code == 1 and "is corrupt at line 3; it was left untouched" in r.stderr
    assert (sessions / "x.jsonl").read_bytes() == before and not server.chat_requests()


def test_resuming_a_big_session_holds_its_working_set_not_the_file():
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--size-mb", "40", "--keep-recent", "400", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    m = json.loads(out.stdout)
    growth = (m["peak_kb"] - m["before_kb"]) * 1024
    assert growth < 3 * m["working_set_bytes"] + LINE_SLACK_BYTES, m
    assert growth < m["file_bytes"] / 5, m


def test_a_lone_surrogate_never_costs_the_session_writer_an_event(isolated_home):
    with Session(isolated_home, "s") as session:
        session.record_message({"role": "user", "content": "look"})
        session.record_message({"role": "assistant", "content": "bad \ud800 name bad\udcffname.txt"})
        session.record_message({"role": "user", "content": "next"})
    data = (isolated_home / "sessions" / "s.jsonl").read_bytes()
    data.decode("utf-8")  # the file stays UTF-8
    with Session(isolated_home, "s") as resumed:
        contents = [m["content"] for m in resumed.state.messages]
    assert contents == ["look", "bad \ufffd name bad\\xffname.txt", "next"]
