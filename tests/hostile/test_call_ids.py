"""A server that numbers every reply's tool calls from call_0, met through the CLI: each call
gets an id no earlier call of the session had, so `recall` of an earlier id returns that call's
output, never a later one's."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from nanohermes.cli import app
from tests.support import raw_servers as raw
from tests.support.scripted_server import RawSSE, text


def same_id_call(name: str, arguments: dict) -> RawSSE:
    head = {
        "index": 0,
        "id": "call_0",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return RawSSE([raw.chunk({"tool_calls": [head]}), raw.chunk({}, "tool_calls")])


def test_recall_of_a_reused_call_id_returns_the_earlier_calls_output(server, workspace):
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    server.add(
        same_id_call("read_file", {"path": "a.txt"}),
        same_id_call("read_file", {"path": "b.txt"}),
        same_id_call("recall", {"id": "call_0"}),
        text("done"),
    )
    result = CliRunner().invoke(app, ["-p", "read both", "--yes", "--base-url", server.url, "-C", str(workspace)])
    assert result.exit_code == 0, result.stderr
    sent = server.chat_requests()[-1]["messages"]
    calls = [c["id"] for m in sent if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
    assert len(set(calls)) == 3 and calls[0] == "call_0"  # the first keeps its id; later ones get their own
    results = {m["tool_call_id"]: m["content"] for m in sent if m["role"] == "tool"}
    assert "alpha" in results[calls[0]] and "beta" in results[calls[1]]
    assert "alpha" in results[calls[2]] and "beta" not in results[calls[2]]  # recall id=call_0: the first output
