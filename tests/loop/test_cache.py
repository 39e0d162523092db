"""What a prompt cache can reuse, through the real loop and the scripted server: a byte-stable
prefix, summaries that extend the conversation, cached tokens read from the provider, and
compaction records that add only what is new."""

import json

from nanohermes.context.summary import SUMMARY_HEADER
from nanohermes.ui.plain import usage_line
from tests.support.agents import TEST_TOOLS, make_agent
from tests.support.scripted_server import (
    Error,
    RawSSE,
    call,
    is_summary_request,
    prompt_tokens,
    prose,
    stream_chunks,
    text,
)


def _reads(steps: int, size: int, summary: str = "Goal: read the outputs.", content: str = ""):
    """A model that calls `big` `steps` times then answers; the server reports real prompt sizes."""
    state = {"calls": 0}

    def handler(body):
        if is_summary_request(body):
            reply = text(summary)
        elif state["calls"] < steps:
            state["calls"] += 1
            reply = call("big", {"size": size + state["calls"]}, content=content)
        else:
            reply = text("all done")
        reply.usage = {"prompt_tokens": prompt_tokens(body), "completion_tokens": 10}
        return reply

    return handler


def test_the_usage_line_shows_the_cached_share_a_server_reports(server, workspace):
    server.add(
        text(
            "hi",
            usage={"prompt_tokens": 1_000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 900}},
        )
    )
    result = make_agent(server, workspace).run_turn("hello")
    assert result.usage.cached_tokens == 900
    assert usage_line(result.usage) == "tokens this turn: 1,000 in (90 % cached), 5 out (1 request(s)); cost unknown"


def test_llama_cpp_timings_count_as_cached_tokens(server, workspace):
    chunks = stream_chunks(text("ok", usage=None), "m")
    chunks[-1]["timings"] = {"cache_n": 700, "prompt_n": 300}
    server.add(RawSSE(chunks))
    result = make_agent(server, workspace).run_turn("hello")
    assert (result.usage.prompt_tokens, result.usage.cached_tokens) == (1_000, 700)


def test_without_a_cache_figure_the_usage_line_says_nothing_about_caching(server, workspace):
    server.add(text("hi", usage={"prompt_tokens": 50, "completion_tokens": 5}))
    result = make_agent(server, workspace).run_turn("hello")
    assert result.usage.cached_tokens is None and "cached" not in usage_line(result.usage)


def test_every_request_is_recorded_with_what_a_prefix_cache_could_not_reuse(server, workspace):
    server.add(call("echo", {"text": "a"}), call("echo", {"text": "b"}), text("done"))
    agent = make_agent(server, workspace, session_name="usage")
    result = agent.run_turn("go")
    agent.session.close()
    usage = [json.loads(line) for line in agent.session.path.read_text().splitlines() if '"type":"usage"' in line]
    assert len(usage) == 3 and all(u["sent_chars"] > u["uncached_chars"] > 0 for u in usage[1:])
    assert usage[0]["sent_chars"] == usage[0]["uncached_chars"]  # nothing was sent before
    assert result.usage.uncached_chars == sum(u["uncached_chars"] for u in usage)


def test_the_system_message_never_changes_and_the_tool_list_changes_at_most_once(server, workspace):
    server.handler = _reads(30, 18_000, content=prose(3_000, "Reasoning about step"))
    make_agent(server, workspace, tools=[*TEST_TOOLS, _recall()]).run_turn("read everything")
    requests = server.chat_requests()
    main = [r for r in requests if not is_summary_request(r)]
    assert len({json.dumps(r["messages"][0]) for r in main}) == 1
    assert len({json.dumps(r["tools"]) for r in main}) == 2  # recall joins at the first compaction
    assert any(is_summary_request(r) for r in requests)


def test_between_compactions_every_request_extends_the_one_before(server, workspace):
    server.handler = _reads(30, 18_000)
    make_agent(server, workspace).run_turn("read everything")
    main = [r["messages"] for r in server.chat_requests() if not is_summary_request(r)]
    rewrites = [i for i in range(1, len(main)) if main[i][: len(main[i - 1])] != main[i - 1]]
    assert 1 <= len(rewrites) <= len(main) // 5  # 120,000 chars: a compaction every 5+ steps


def test_a_summary_request_extends_the_conversation_and_asks_for_no_tool_call(server, workspace):
    server.handler = _reads(12, 18_000, content=prose(3_000, "Reasoning about step"))
    make_agent(server, workspace, context_window=16_384).run_turn("read everything")
    requests = server.chat_requests()
    (first, *_) = [i for i, r in enumerate(requests) if is_summary_request(r)]
    summary, before = requests[first], requests[first - 1]
    assert summary["tool_choice"] == "none" and summary["tools"] == before["tools"]
    *prefix, instruction = summary["messages"]
    assert prefix == before["messages"][: len(prefix)] and len(prefix) > 2
    assert instruction["role"] == "user" and "handover note" in instruction["content"]
    after = requests[first + 1]["messages"]
    assert after[1]["role"] == "user" and after[1]["content"].startswith(SUMMARY_HEADER)


def test_after_an_overflow_teaches_a_smaller_window_the_next_steps_do_not_summarise_again(server, workspace):
    state = {"calls": 0, "overflowed": False}

    def handler(body):
        if is_summary_request(body):
            reply = text("Goal: read the outputs.")
        elif state["calls"] == 3 and not state["overflowed"]:
            state["overflowed"] = True
            return Error(
                400, {"error": {"message": "maximum context length is 16384 tokens", "code": "context_length_exceeded"}}
            )
        elif state["calls"] < 10:
            state["calls"] += 1
            reply = call("big", {"size": 2_000 + state["calls"]})
        else:
            reply = text("done")
        reply.usage = {"prompt_tokens": prompt_tokens(body), "completion_tokens": 10}
        return reply

    server.handler = handler
    agent = make_agent(server, workspace)
    assert agent.run_turn("go").final_text == "done" and agent.settings.window == 16_384
    assert sum(is_summary_request(r) for r in server.chat_requests()) <= 1


def test_a_full_recent_tail_does_not_make_every_step_compact(server, workspace):
    server.handler = _reads(15, 9_000, content=prose(2_000, "Reasoning about step"))
    agent = make_agent(server, workspace, context_window=16_384)
    assert agent.run_turn("go").final_text == "all done"
    main = [r["messages"] for r in server.chat_requests() if not is_summary_request(r)]
    rewrites = sum(main[i][: len(main[i - 1])] != main[i - 1] for i in range(1, len(main)))
    assert 1 <= rewrites <= 5 and sum(is_summary_request(r) for r in server.chat_requests()) <= 4


def test_cache_breakpoints_mark_the_system_message_and_the_latest_message(server, workspace):
    server.add(call("echo", {"text": "a"}), text("done"))
    make_agent(server, workspace, cache_breakpoints=True).run_turn("go")
    sent = server.chat_requests()[-1]["messages"]
    assert sent[0]["content"] == [{"type": "text", "text": "SYSTEM", "cache_control": {"type": "ephemeral"}}]
    assert sent[-1]["content"][0]["cache_control"] == {"type": "ephemeral"} and sent[-1]["role"] == "tool"
    assert all(isinstance(m["content"], str) for m in sent[1:-1])


def test_a_reply_streamed_as_content_parts_is_read_as_text(server, workspace):
    chunks = stream_chunks(text("x"), "m")
    for chunk in chunks:
        for choice in chunk["choices"]:
            if choice["delta"].get("content"):
                choice["delta"]["content"] = [{"type": "text", "text": "in parts"}]
    server.add(RawSSE(chunks))
    assert make_agent(server, workspace).run_turn("hi").final_text == "in parts"


def test_reasoning_in_a_reply_does_not_join_the_history(server, workspace):
    server.add(text("<think>long private musing</think>The answer is 4."), text("ok"))
    agent = make_agent(server, workspace)
    assert agent.run_turn("2+2?").final_text.endswith("The answer is 4.")
    agent.run_turn("thanks")
    assert "long private musing" not in json.dumps(server.chat_requests()[-1]["messages"])


def test_a_compaction_record_names_what_it_kept_and_writes_only_what_is_new(server, workspace):
    server.handler = _reads(30, 18_000, content=prose(3_000, "Reasoning about step"))
    agent = make_agent(server, workspace, session_name="records")
    agent.run_turn("read everything")
    working = agent.messages
    agent.session.close()
    lines = agent.session.path.read_text().splitlines()
    records = [json.loads(line) for line in lines if '"type":"compaction"' in line]
    assert records and all(any(isinstance(item, int) for item in r["messages"]) for r in records)
    new_bytes = sum(len(json.dumps([m for m in r["messages"] if isinstance(m, dict)])) for r in records)
    assert new_bytes < sum(len(line) for line in lines) // 10  # not a copy of the working set each time
    resumed = make_agent(server, workspace, session_name="records")
    assert resumed.messages[1:] == working[1:]


def _recall():
    from nanohermes.tools.recall import recall

    return recall
