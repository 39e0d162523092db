"""Misbehaving model servers, met through the CLI: odd chunks are read, not crashed on; a
stream that never ends times out on reply bytes; a finished reply is kept; a slow server is
announced, not aborted; a 200 that is not the API is never "Cannot reach"."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from nanohermes.cli import app
from nanohermes.provider.watch import FINISH_GRACE_S
from tests.support import raw_servers as raw
from tests.support.scripted_server import RawSSE, Reply, call, text
from tests.support.timing import HANG_GUARD_S, NEVER_S

RAW_DONE_GRACE_S = HANG_GUARD_S  # a kept reply without [DONE] returns after the 2 s grace, not the held-open stream


def one_shot(url: str, workspace, *args):
    start = time.monotonic()
    result = CliRunner().invoke(app, ["-p", "hi", "--yes", "--base-url", url, "-C", str(workspace), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return SimpleNamespace(
        code=result.exit_code, out=result.stdout, err=result.stderr, elapsed=time.monotonic() - start
    )


@pytest.fixture
def serve():
    servers = []

    def start(response: bytes, **kw) -> raw.RawServer:
        servers.append(raw.RawServer(response, models=raw.no_models(), **kw))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_a_tool_call_whose_arguments_are_a_json_object_runs(server, workspace):
    (workspace / "a.txt").write_text("x")
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "glob", "arguments": {"pattern": "*.txt"}}}
    server.add(RawSSE([raw.chunk({"tool_calls": [call]}), raw.chunk({}, "tool_calls")]), text("done"))
    r = one_shot(server.url, workspace)
    assert r.code == 0 and r.out == "done\n", r.err
    sent = server.chat_requests()[1]["messages"]
    assert json.loads(sent[2]["tool_calls"][0]["function"]["arguments"]) == {"pattern": "*.txt"}
    assert "a.txt" in sent[3]["content"]


def test_null_events_choices_deltas_and_calls_are_skipped(server, workspace):
    junk = [
        None,
        42,
        {"choices": None},
        {"choices": [None]},
        {"choices": [{"delta": None}]},
        {"choices": "x"},
        raw.chunk({"content": 5}),
        raw.chunk({"tool_calls": [None, "x"]}),
        raw.chunk({"tool_calls": "x"}),
    ]
    server.add(RawSSE([*junk, raw.chunk({"content": "still here"}), raw.chunk({}, "stop")]))
    r = one_shot(server.url, workspace)
    assert r.code == 0 and r.out == "still here\n", r.err


def test_a_lone_surrogate_in_an_answer_is_shown_replaced_and_saved(server, workspace, isolated_home):
    server.add(RawSSE([raw.chunk({"content": "bad \ud800 x"}), raw.chunk({}, "stop")]), text("ok"))
    r = one_shot(server.url, workspace, "--session", "sur")
    assert r.code == 0 and r.out == "bad \ufffd x\n", r.err
    saved = (isolated_home / "sessions" / "sur.jsonl").read_text(encoding="utf-8")
    assert '"content":"bad \ufffd x"' in saved
    assert one_shot(server.url, workspace, "--session", "sur").code == 0  # and it resumes


def test_two_tool_calls_with_one_id_both_run_and_both_results_are_sent(server, workspace):
    calls = [
        {
            "index": i,
            "id": "same",
            "type": "function",
            "function": {"name": "glob", "arguments": json.dumps({"pattern": p})},
        }
        for i, p in enumerate(["*.py", "*.md"])
    ]
    server.add(RawSSE([raw.chunk({"tool_calls": calls}), raw.chunk({}, "tool_calls")]), text("done"))
    r = one_shot(server.url, workspace)
    assert r.code == 0, r.err
    sent = server.chat_requests()[1]["messages"]
    ids = [c["id"] for c in sent[2]["tool_calls"]]
    answered = [m["tool_call_id"] for m in sent[3:] if m["role"] == "tool"]
    assert len(set(ids)) == 2 and answered == ids
    assert "'*.py'" in sent[3]["content"] and "'*.md'" in sent[4]["content"]


def test_a_stream_of_keep_alive_comments_times_out_on_reply_bytes(serve, workspace, isolated_home):
    (isolated_home / "config.toml").write_text("request_timeout = 1\n")
    server = serve(raw.open_event_stream(), hold_open=NEVER_S, ping_every=0.2)
    r = one_shot(server.url, workspace)
    assert r.code == 1 and "timed out (no reply for 1 s)" in r.err and "request_timeout" in r.err
    assert len(server.posts()) == 2 and "retry 1/1" in r.err  # one quick retry, not four
    assert r.elapsed < HANG_GUARD_S  # not the stream's pings


@pytest.mark.parametrize("usage", [True, False], ids=["with-usage", "without-usage"])
def test_a_complete_reply_is_kept_when_done_never_comes(serve, workspace, usage):
    events = [raw.chunk({"content": "the whole answer"}), raw.chunk({}, "stop")]
    if usage:
        events.append({**raw.chunk({}), "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3}})
    server = serve(raw.open_event_stream(*events), hold_open=NEVER_S)
    r = one_shot(server.url, workspace)
    assert r.code == 0 and r.out == "the whole answer\n", r.err
    assert len(server.posts()) == 1 and r.elapsed < (FINISH_GRACE_S - 0.1 if usage else RAW_DONE_GRACE_S)


def test_a_server_that_sends_headers_and_then_nothing_is_announced_and_retried_once(serve, workspace, isolated_home):
    (isolated_home / "config.toml").write_text("request_timeout = 1\nslow_reply_notice = 0.3\n")
    server = serve(raw.open_event_stream(), hold_open=NEVER_S)
    r = one_shot(server.url, workspace)
    assert r.code == 1 and "the server has not answered yet" in r.err and "timed out" in r.err
    assert len(server.posts()) == 2 and r.elapsed < HANG_GUARD_S  # not the server's silence


def test_a_slow_server_is_told_about_but_not_aborted(server, workspace, isolated_home):
    (isolated_home / "config.toml").write_text("slow_reply_notice = 0.2\n")
    server.add(Reply(content="late but here", first_delay=1.2))  # headers, then 1.2 s before the first chunk
    r = one_shot(server.url, workspace)
    assert r.code == 0 and r.out == "late but here\n", r.err
    assert "the server has not answered yet (" in r.err and "still waiting" in r.err


NOT_THE_API = {
    "plain-text": raw.plain_text("Hello, World!"),
    "html": raw.html_page(),
    "empty-typeless": raw.http_response("200 OK", "", ""),
    "json-not-stream": raw.json_not_stream(),
    "done-only": raw.http_response("200 OK", "text/event-stream", "data: [DONE]\n\n"),
    "data-not-json": raw.http_response("200 OK", "text/event-stream", "data: garbage{\n\n"),
    "no-finish-reason": raw.stream_without_finish(),
}


@pytest.mark.parametrize("response", NOT_THE_API.values(), ids=NOT_THE_API.keys())
def test_a_200_that_is_not_the_api_is_named_not_called_unreachable(serve, workspace, response):
    server = serve(response)
    r = one_shot(server.url, workspace)
    assert r.code == 1 and "Cannot reach" not in r.err and "answered" in r.err, r.err
    assert len(server.posts()) <= 2 and "retry 2/" not in r.err


def test_a_call_whose_arguments_nest_100000_deep_is_answered_as_bad_arguments(server, workspace):
    """Issue 44, item 5: a model server's `[[[[…` 100,000 deep in a call's arguments ended the run
    with a RecursionError (every reader of the call parses them)."""
    deep = '{"path": ' + "[" * 100_000 + "]" * 100_000 + "}"
    server.add(call("read_file", deep), text("sorry"))
    r = CliRunner().invoke(app, ["-p", "go", "--base-url", server.url, "-C", str(workspace)])
    assert r.exit_code == 0 and "sorry" in r.stdout, r.stderr
    result = next(m for m in server.chat_requests()[1]["messages"] if m["role"] == "tool")["content"]
    assert "arguments for read_file are not valid JSON" in result


def test_a_stream_event_nested_100000_deep_is_named_not_json(serve, workspace):
    deep = '{"choices": [], "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    server = serve(raw.http_response("200 OK", "text/event-stream", f"data: {deep}\n\ndata: [DONE]\n\n"))
    r = one_shot(server.url, workspace)
    assert r.code == 1 and "an event stream whose data is not JSON" in r.err and "Traceback" not in r.err
