"""The context engine inside the real loop, end to end through the scripted server."""

import json

import pytest

from nanohermes.context import pairing_problems
from nanohermes.context.budget import total_size
from nanohermes.errors import ContextOverflowError
from tests.support.agents import make_agent
from tests.support.scripted_server import Error, call, is_summary_request, prose, text

BUDGET = 120_000


def _trajectory(steps: int, summary="Goal: inspect files. Done: read many big outputs. Next: answer.", size=18_000):
    """A model that calls `big` (`size` bytes each) `steps` times, then answers; summaries on request."""
    state = {"calls": 0}

    def handler(body):
        if is_summary_request(body):
            return summary if isinstance(summary, Error) else text(summary)
        if state["calls"] < steps:
            state["calls"] += 1
            return call("big", {"size": size + state["calls"]})
        return text("all done")

    return handler


def test_thirty_steps_of_18kb_results_keep_every_request_under_budget(server, workspace):
    server.handler = _trajectory(30)
    agent = make_agent(server, workspace, session_name="long")
    result = agent.run_turn("read everything")
    assert result.final_text == "all done"
    chats = [r for r in server.chat_requests() if not is_summary_request(r)]
    summaries = [r for r in server.chat_requests() if is_summary_request(r)]
    assert len(chats) == 31
    assert all(total_size(r["messages"]) <= BUDGET for r in chats)
    assert all(not pairing_problems(r["messages"]) for r in chats)
    last = chats[-1]["messages"]
    assert any(m["role"] == "tool" and m["content"].startswith("[old tool output cleared") for m in last)
    assert not summaries, "placeholders alone bring 30 × 18 KB under the low-water mark: no model call"
    assert sum(m["role"] == "system" for m in last) == 1
    assert {"role": "user", "content": "read everything"} in last  # the latest user message, verbatim


def test_a_failing_summariser_still_finishes_the_task_with_a_digest(server, workspace):
    server.handler = _trajectory(30, summary=Error(500, {"error": {"message": "summariser down"}}))
    events = []
    agent = make_agent(server, workspace, events=events)
    assert agent.run_turn("read everything").final_text == "all done"
    chats = [r for r in server.chat_requests() if not is_summary_request(r)]
    assert all(total_size(r["messages"]) <= BUDGET for r in chats)


def test_chat_without_tool_calls_is_compacted_before_the_request(server, workspace):
    server.handler = lambda body: (
        text("Summary: the user pasted long texts.") if is_summary_request(body) else text(prose(12_000, "noted"))
    )
    agent = make_agent(server, workspace)
    for i in range(12):
        agent.run_turn(f"message {i}: " + "lorem ipsum " * 1000)
    last = server.chat_requests()[-1]
    assert total_size(last["messages"]) <= BUDGET
    assert last["messages"][-1]["content"].startswith("message 11:")
    assert not is_summary_request(last)


def test_provider_overflow_forces_compaction_and_retries(server, workspace):
    overflow = Error(
        400,
        {"error": {"message": "This model's maximum context length is 8192 tokens", "code": "context_length_exceeded"}},
    )
    server.add(call("big", {"size": 19_000}), overflow, text("recovered"))
    server.handler = lambda body: text("summary")
    agent = make_agent(server, workspace)
    assert agent.run_turn("go").final_text == "recovered"
    chats = [r for r in server.chat_requests() if not is_summary_request(r)]
    assert total_size(chats[-1]["messages"]) < total_size(chats[-2]["messages"])
    assert agent.settings.window == 8192  # learned from the error message


def test_repeated_overflow_gives_up_with_a_clear_error_after_two_retries(server, workspace):
    overflow = Error(
        400,
        {
            "error": {
                "message": "request (9000 tokens) exceeds the available context size (4096 tokens)",
                "type": "exceed_context_size_error",
                "n_ctx": 4096,
            }
        },
    )
    server.add(overflow, overflow, overflow, text("never"))
    agent = make_agent(server, workspace)
    with pytest.raises(ContextOverflowError):
        agent.run_turn("hi")
    assert len([r for r in server.chat_requests() if not is_summary_request(r)]) == 3


def test_compaction_is_recorded_and_resume_restores_the_working_set(server, workspace):
    server.handler = _trajectory(30)
    agent = make_agent(server, workspace, session_name="resume")
    agent.run_turn("read everything")
    sent_last = agent.messages
    agent.session.close()
    events = [json.loads(line) for line in agent.session.path.read_text().splitlines()]
    assert any(e["type"] == "compaction" for e in events)
    stored = [e["message"] for e in events if e["type"] == "message" and e["message"]["role"] == "tool"]
    assert len(stored) == 30 and all(len(m["content"]) > 18_000 for m in stored)  # storage keeps everything
    assert any(m["role"] == "tool" and len(m["content"]) < 1_000 for m in sent_last)  # what is sent does not
    resumed = make_agent(server, workspace, session_name="resume")
    assert resumed.messages[1:] == sent_last[1:]


def test_recall_returns_an_output_replaced_by_a_placeholder(server, workspace):
    from nanohermes.tools.recall import recall
    from tests.support.agents import TEST_TOOLS

    server.handler = _trajectory(26, size=5_000)  # placeholders alone bring this under budget
    agent = make_agent(server, workspace, tools=[*TEST_TOOLS, recall])
    agent.run_turn("go")
    assert not [r for r in server.chat_requests() if is_summary_request(r)], "no summary was needed"
    placeholders = [m for m in agent.messages if m["role"] == "tool" and "recall" in m["content"]]
    assert placeholders, "old 5 KB results should have become placeholders"
    call_id = placeholders[0]["tool_call_id"]
    assert call_id in placeholders[0]["content"]
    out = recall.func(agent.ctx, id=call_id, offset=0, limit=100)  # a limit under MIN_CHUNK_CHARS is raised
    assert out.startswith(f"recall {call_id} chars 0–1000 of 5001\n")
    assert out.endswith(f"4001 more chars: recall id={call_id} offset=1000")


def test_recall_with_a_tiny_limit_still_returns_a_useful_chunk(workspace, isolated_home):
    """A small model asked for limit=1 (as if lines) and walked an output one character a call."""
    from nanohermes.tools import ToolContext
    from nanohermes.tools.outputs import OutputStore
    from nanohermes.tools.recall import MIN_CHUNK_CHARS, recall

    full = "".join(f"line {i}\n" for i in range(600))
    ctx = ToolContext(workspace=workspace, home=isolated_home, outputs=OutputStore({"c1": full}))
    out = recall.func(ctx, id="c1", offset=1, limit=1)
    assert out.startswith(f"recall c1 chars 1–{1 + MIN_CHUNK_CHARS} of {len(full)}\n")
    assert out.endswith(f"more chars: recall id=c1 offset={1 + MIN_CHUNK_CHARS}")


def test_recall_of_cjk_output_fits_the_tool_cap_and_continues_exactly(workspace, isolated_home):
    from nanohermes.tools import ToolContext, dispatch
    from nanohermes.tools.outputs import OutputStore
    from nanohermes.tools.recall import recall

    full = "".join(chr(0x4E00 + i % 500) for i in range(30_000))  # 90 KB of CJK
    ctx = ToolContext(workspace=workspace, home=isolated_home, outputs=OutputStore({"c1": full}))
    got, offset = [], 0
    while True:
        result = dispatch(ctx, {"recall": recall}, "recall", json.dumps({"id": "c1", "offset": offset}))
        assert "output truncated" not in result.content
        _header, body = result.content.split("\n", 1)
        body, _, more = body.partition("\n… ")
        got.append(body)
        if not more:
            break
        offset = int(more.rsplit("offset=", 1)[1])
    assert "".join(got) == full


def test_an_over_budget_check_that_changes_nothing_writes_no_snapshot_and_says_it_once(server, workspace):
    steps = iter([*[call("echo", {"text": str(i)}) for i in range(8)], text("done")])
    server.handler = lambda body: text("summary") if is_summary_request(body) else next(steps)
    events = []
    agent = make_agent(server, workspace, events=events)
    agent.run_turn("please read this: " + "pasted text " * 13_000)  # one 156 KB message
    lines = agent.session.path.read_text().splitlines()
    snapshots = [line for line in lines if line.startswith('{"type":"compaction"')]
    assert len(snapshots) <= 2
    notices = [e.text for e in events if type(e).__name__ == "Notice"]
    assert len(notices) == len(set(notices))


def test_a_server_that_reports_no_usage_never_gets_a_prompt_over_the_window(server, workspace):
    """Our own token count of each request — its messages and its tool schemas — stays under the
    compaction trigger (which leaves room for the reply within the window), though the server never
    says how long a prompt was: the schemas were left out of the count until a usage report came."""
    import json

    from nanohermes.context.tokens import count_tokens, message_tokens
    from nanohermes.tools.builtin import BUILTIN_TOOLS
    from tests.support.scripted_server import Reply

    for i in range(14):
        (workspace / f"part{i}.txt").write_text("".join(f"record {i}-{n}: value {n * 7}\n" for n in range(160)))
    server.add(
        *[Reply(tool_calls=[("read_file", json.dumps({"path": f"part{i}.txt"}))], usage=None) for i in range(14)],
        Reply(content="read them all", usage=None),
    )
    agent = make_agent(server, workspace, tools=BUILTIN_TOOLS, context_window=8192)
    agent.run_turn("read part0.txt to part13.txt, one by one")
    trigger = agent.settings.high_water_tokens
    for request in server.chat_requests():
        tools = count_tokens(json.dumps(request["tools"], ensure_ascii=False, separators=(",", ":")))
        prompt = sum(message_tokens(m) for m in request["messages"]) + tools
        assert prompt <= trigger and prompt + request["max_tokens"] <= 8192, (prompt, trigger)
