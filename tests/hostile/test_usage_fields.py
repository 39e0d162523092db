"""Issue 26, item 8: a server's usage fields as strings or objects crashed the run; negative, NaN
or ∞ counts were added up and printed (`--output-format json` emitted `Infinity`); cached tokens
above the prompt's read "10000 % cached"; a tool call in choices[1] joined the reply and ran.
Driven through the CLI against raw event streams."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from nanohermes.cli import app
from tests.support import raw_servers as raw
from tests.support.scripted_server import RawSSE

ODD_USAGE = {
    "strings": {"prompt_tokens": "100", "completion_tokens": "7"},
    "objects": {"prompt_tokens": {"n": 1}, "completion_tokens": [3], "prompt_tokens_details": {"cached_tokens": "x"}},
    "negative": {"prompt_tokens": -100, "completion_tokens": -7},
    "nan": {"prompt_tokens": math.nan, "completion_tokens": math.nan},
    "infinite": {"prompt_tokens": math.inf, "completion_tokens": -math.inf},
    "huge": {"prompt_tokens": 1e300, "completion_tokens": 10**30},
    "booleans": {"prompt_tokens": True, "completion_tokens": False},
}


def one_shot(server, workspace, *args):
    r = CliRunner().invoke(app, ["-p", "hi", "--yes", "--base-url", server.url, "-C", str(workspace), *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r


def reply_with_usage(usage: dict) -> RawSSE:
    return RawSSE(
        [
            raw.chunk({"content": "the answer"}),
            raw.chunk({}, "stop"),
            {**raw.chunk({}), "choices": []} | {"usage": usage},
        ]
    )


@pytest.mark.parametrize("usage", ODD_USAGE.values(), ids=ODD_USAGE.keys())
def test_odd_usage_fields_are_read_as_not_reported_never_crash_or_print_garbage(server, workspace, usage):
    server.add(reply_with_usage(usage))
    r = one_shot(server, workspace, "--output-format", "json")
    assert r.exit_code == 0, r.stderr
    result = json.loads(r.stdout)  # strict JSON: no NaN or Infinity
    assert result["answer"] == "the answer"
    counts = result["usage"]
    assert all(isinstance(counts[k], int) and 0 <= counts[k] < 10**9 for k in ("prompt_tokens", "completion_tokens"))
    assert "Infinity" not in r.stdout and "NaN" not in r.stdout


def test_cached_tokens_above_the_prompt_are_never_shown_above_100_percent(server, workspace):
    server.add(
        reply_with_usage(
            {"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 10_000}}
        )
    )
    r = one_shot(server, workspace)
    assert r.exit_code == 0 and "tokens this turn: 100 in (100 % cached), 5 out" in r.stderr, r.stderr


def test_a_tool_call_in_a_second_choice_is_no_part_of_the_reply(server, workspace):
    touch = {
        "index": 0,
        "id": "c1",
        "type": "function",
        "function": {"name": "run_command", "arguments": json.dumps({"command": "touch PWNED"})},
    }
    second = {"index": 1, "delta": {"content": " and more", "tool_calls": [touch]}, "finish_reason": None}
    first = raw.chunk({"content": "the answer"})
    events = [{**first, "choices": [*first["choices"], second]}, raw.chunk({}, "stop")]
    events.append({**raw.chunk({}), "choices": [{"index": 1, "delta": {}, "finish_reason": "tool_calls"}]})
    server.add(RawSSE(events))
    r = one_shot(server, workspace)
    assert r.exit_code == 0 and r.stdout == "the answer\n", r.stderr
    assert not (workspace / "PWNED").exists() and len(server.chat_requests()) == 1
