"""Replies too big or in too many pieces, met through the CLI: a reply is assembled in time
linear in its size (never re-joined per delta), and one past MAX_REPLY_CHARS is cut there,
its text kept up to the cap and the cut said to the user and to the model."""

from __future__ import annotations

import json
import os
import time

import pytest
from typer.testing import CliRunner

from nanohermes.cli import app
from nanohermes.loop.coach.plain import TOO_LONG_CALL_RETRY
from nanohermes.provider.stream import MAX_REPLY_CHARS, TOO_LONG_NOTE
from tests.support import raw_servers as raw
from tests.support.scripted_server import Reply, call, text

GENEROUS_S = 60  # ~5 s of CPU; a machine shared at load 8 stretches that to ~30 s; the quadratic took many minutes


def noise(chars: int) -> str:
    """Random hex: text that never repeats (a loop would be cut as one), needs no JSON escaping
    and is made at C speed (megabytes of it)."""
    return os.urandom(chars // 2 + 1).hex()[:chars]


@pytest.fixture
def flood_server():
    servers = []

    def start(content: str, piece: int) -> raw.RawServer:
        servers.append(raw.RawServer(raw.flood(content, piece), models=raw.no_models()))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def one_shot(url: str, workspace, *args):
    start = time.monotonic()
    result = CliRunner().invoke(app, ["-p", "hi", "--yes", "--base-url", url, "-C", str(workspace), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result, time.monotonic() - start


def saved_answer(home, session: str) -> str:
    lines = (home / "sessions" / f"{session}.jsonl").read_text(encoding="utf-8").splitlines()
    messages = [entry["message"] for entry in map(json.loads, lines) if entry["type"] == "message"]
    return messages[-1]["content"]


def test_a_40_mb_reply_in_16_kb_deltas_is_cut_at_the_cap_with_its_text_kept(flood_server, workspace, isolated_home):
    content = noise(40 * 2**20)
    server = flood_server(content, 16 * 1024)
    result, elapsed = one_shot(server.url, workspace, "--session", "flood")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == content[:MAX_REPLY_CHARS] + "\n"  # everything up to the cap, nothing after it
    assert "the answer passed 8 MB and was cut there; the rest was not read" in result.stderr
    assert saved_answer(isolated_home, "flood") == content[:MAX_REPLY_CHARS] + TOO_LONG_NOTE  # the model reads it
    assert elapsed < GENEROUS_S


def test_a_2_mb_reply_in_8_byte_deltas_is_read_whole(flood_server, workspace, isolated_home):
    content = noise(2 * 2**20)
    server = flood_server(content, 8)
    result, elapsed = one_shot(server.url, workspace, "--session", "tiny")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == content + "\n" and "was cut" not in result.stderr
    assert saved_answer(isolated_home, "tiny") == content
    assert elapsed < GENEROUS_S


def test_a_tool_call_past_the_cap_is_not_run_and_the_model_is_told(server, workspace):
    flood = json.dumps({"path": "big.txt", "content": noise(MAX_REPLY_CHARS + 2**20)})
    server.add(call("write_file", flood, chunk_size=64 * 1024), text("wrote it in pieces instead"))
    result, _ = one_shot(server.url, workspace)
    assert result.exit_code == 0 and result.stdout == "wrote it in pieces instead\n", result.stderr
    assert not (workspace / "big.txt").exists()
    assert "passed 8 MB mid tool call" in result.stderr
    retry = server.chat_requests()[1]["messages"]
    assert retry[-1]["role"] == "user" and TOO_LONG_CALL_RETRY in retry[-1]["content"]
    assert not any(m["role"] == "tool" for m in retry) and "tool_calls" not in retry[-2]


def test_a_reply_under_the_cap_in_many_deltas_keeps_its_tool_call(server, workspace):
    (workspace / "a.txt").write_text("x")
    server.add(Reply(content=noise(64 * 1024), tool_calls=[("glob", '{"pattern": "*.txt"}')], chunk_size=3), text("ok"))
    result, _ = one_shot(server.url, workspace)
    assert result.exit_code == 0 and result.stdout.endswith("ok\n"), result.stderr
    assert "a.txt" in server.chat_requests()[1]["messages"][-1]["content"]
