import json

import pytest

from nanohermes import events as ev
from nanohermes.errors import ProviderError
from nanohermes.stops import stop_message
from tests.support.agents import make_agent
from tests.support.scripted_server import Error, Reply, call, calls, is_summary_request, prose, text


def test_plain_answer_streams_text_and_reports_turn_usage(server, workspace):
    server.add(text("Hello there, friend.", usage={"prompt_tokens": 50, "completion_tokens": 5}, delay=0.05))
    events = []
    agent = make_agent(server, workspace, events=events)
    result = agent.run_turn("hi")
    assert result.final_text == "Hello there, friend."
    assert "".join(e.text for e in events if isinstance(e, ev.TextDelta)) == "Hello there, friend."
    assert len([e for e in events if isinstance(e, ev.TextDelta)]) > 1  # really streamed: pieces that come apart
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (50, 5)
    body = server.chat_requests()[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] > 0
    assert body["messages"][0] == {"role": "system", "content": "SYSTEM"}


def test_usage_is_the_increment_of_each_turn_not_a_running_total(server, workspace):
    server.add(
        text("a", usage={"prompt_tokens": 10, "completion_tokens": 1}),
        call("echo", {"text": "x"}, usage={"prompt_tokens": 20, "completion_tokens": 2}),
        text("b", usage={"prompt_tokens": 30, "completion_tokens": 3}),
    )
    agent = make_agent(server, workspace)
    first = agent.run_turn("one")
    second = agent.run_turn("two")
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (10, 1)
    assert (second.usage.prompt_tokens, second.usage.completion_tokens, second.usage.requests) == (50, 5, 2)


def test_missing_usage_is_tolerated(server, workspace):
    server.add(text("ok", usage=None))
    result = make_agent(server, workspace).run_turn("hi")
    assert result.final_text == "ok" and result.usage.reported is False


def test_tool_call_deltas_split_across_chunks_are_assembled_by_index(server, workspace):
    server.add(
        Reply(tool_calls=[("echo", json.dumps({"text": "alpha " * 20})), ("echo", '{"text": "beta"}')], chunk_size=3),
        text("done"),
    )
    agent = make_agent(server, workspace)
    assert agent.run_turn("go").final_text == "done"
    second = server.chat_requests()[1]["messages"]
    assistant, r1, r2 = second[2], second[3], second[4]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["echo", "echo"]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"text": "alpha " * 20}
    assert r1 == {"role": "tool", "tool_call_id": assistant["tool_calls"][0]["id"], "content": "echo: " + "alpha " * 20}
    assert r2["tool_call_id"] == assistant["tool_calls"][1]["id"] and r2["content"] == "echo: beta"


def test_malformed_arguments_unknown_tool_and_raising_tool_become_readable_errors(server, workspace):
    server.add(
        Reply(tool_calls=[("echo", '{"text": "unterminated'), ("nope", "{}"), ("explode", '{"message": "boom"}')]),
        text("recovered"),
    )
    agent = make_agent(server, workspace)
    assert agent.run_turn("go").final_text == "recovered"
    results = [m["content"] for m in server.chat_requests()[1]["messages"] if m["role"] == "tool"]
    assert results[0].startswith("error: arguments for echo are not valid JSON")
    assert results[1].startswith("error: unknown tool 'nope'") and "echo" in results[1]
    assert results[2] == "error: explode failed: RuntimeError: boom"


def test_every_tool_result_is_clamped_to_20000_bytes_with_a_note(server, workspace):
    server.add(call("big", {"size": 25_000}), text("ok"))
    agent = make_agent(server, workspace)
    agent.run_turn("go")
    content = server.chat_requests()[1]["messages"][-1]["content"]
    assert content == "x" * 20_000 + "\n… output truncated (5000 bytes omitted)"
    assert agent.ctx.outputs.get(server.chat_requests()[1]["messages"][-2]["tool_calls"][0]["id"]) == "x" * 25_000


def test_server_errors_are_retried_with_backoff_then_succeed(server, workspace):
    server.add(Error(500, {"error": {"message": "boom"}}), Error(503, "busy"), text("finally"))
    events = []
    agent = make_agent(server, workspace, events=events)
    assert agent.run_turn("hi").final_text == "finally"
    sleeps = [e[1] for e in events if isinstance(e, tuple) and e[0] == "sleep"]
    assert len(sleeps) == 2 and sleeps[1] > sleeps[0] * 1.2


def test_429_honours_retry_after(server, workspace):
    server.add(Error(429, {"error": {"message": "slow down"}}, {"Retry-After": "7"}), text("ok"))
    events = []
    make_agent(server, workspace, events=events).run_turn("hi")
    assert [e[1] for e in events if isinstance(e, tuple) and e[0] == "sleep"] == [7.0]


def test_retries_are_bounded(server, workspace):
    server.add(*[Error(500, "down")] * 10)
    agent = make_agent(server, workspace)
    with pytest.raises(ProviderError, match="server error"):
        agent.run_turn("hi")
    assert len(server.chat_requests()) == 5


def test_dropped_connection_mid_stream_is_retried(server, workspace):
    server.add(Reply(content="partial answer that will be cut", drop_after=3), text("whole answer"))
    assert make_agent(server, workspace).run_turn("hi").final_text == "whole answer"


def test_401_is_not_retried_and_says_what_to_set(server, workspace):
    server.add(Error(401, {"error": {"message": "bad key"}}))
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        make_agent(server, workspace).run_turn("hi")
    assert len(server.chat_requests()) == 1


def test_third_identical_call_is_refused_and_fifth_stops_the_run(server, workspace):
    server.add(*[call("echo", {"text": "same"}) for _ in range(6)], text("never"))
    agent = make_agent(server, workspace)
    result = agent.run_turn("loop")
    assert result.stopped_reason == "limit" and "repeating" in stop_message(result)
    results = [m["content"] for m in agent.messages if m["role"] == "tool"]
    assert results[:2] == ["echo: same", "echo: same"]
    assert results[2].startswith("error: this is repeat number 3 of the same echo call")


def test_max_steps_stops_the_turn_and_says_so(server, workspace):
    server.add(*[call("echo", {"text": str(i)}) for i in range(3)], text("echo said 0, 1 and 2"))
    result = make_agent(server, workspace, max_steps=3).run_turn("go")
    assert result.stopped_reason == "limit" and "--max-steps 3" in stop_message(result)
    assert len(server.chat_requests()) == 4  # three steps and the last request, tools off
    assert result.final_text == "[partial answer: the run stopped early] echo said 0, 1 and 2"


def test_without_an_approver_risky_tools_are_refused_with_how_to_allow(server, workspace):
    server.add(call("danger", {"path": "f.txt"}), text("ok"))
    agent = make_agent(server, workspace, mode="ask", approve=None)
    agent.run_turn("go")
    assert not (workspace / "f.txt").exists()
    refusal = next(m for m in agent.messages if m["role"] == "tool")["content"]
    assert refusal.startswith("refused:") and "--yes" in refusal


def test_approver_always_allows_the_rest_of_the_session(server, workspace):
    asked = []

    def approve(tool, args, preview):
        asked.append(args)
        return "always"

    server.add(call("danger", {"path": "a"}), call("danger", {"path": "b"}), text("ok"))
    make_agent(server, workspace, mode="ask", approve=approve).run_turn("go")
    assert asked == [{"path": "a"}] and (workspace / "b").read_text() == "done"


def test_plan_mode_offers_only_read_only_tools(server, workspace):
    server.add(text("plan"))
    make_agent(server, workspace, mode="plan").run_turn("go")
    names = [t["function"]["name"] for t in server.chat_requests()[0]["tools"]]
    assert "danger" not in names and "echo" in names


def test_tool_call_cut_by_max_tokens_is_not_run_and_the_model_is_told(server, workspace):
    server.add(Reply(tool_calls=[("danger", '{"path": "cut')], finish_reason="length"), text("ok"))
    agent = make_agent(server, workspace)
    assert agent.run_turn("go").final_text == "ok"
    assert not list(workspace.iterdir())
    sent = server.chat_requests()[1]["messages"]
    assert "cut off by the output token limit" in sent[-1]["content"] and not any(m.get("tool_calls") for m in sent)


def test_ctrl_c_during_a_tool_gives_every_call_a_result(server, workspace):
    from nanohermes.tools import tool

    @tool(params={"n": "n"})
    def interrupt(ctx, n: int) -> str:
        """Raises KeyboardInterrupt."""
        raise KeyboardInterrupt

    server.add(calls(("echo", {"text": "a"}), ("interrupt", {"n": 1}), ("echo", {"text": "c"})), text("next"))
    agent = make_agent(
        server, workspace, tools=[*__import__("tests.support.agents", fromlist=["TEST_TOOLS"]).TEST_TOOLS, interrupt]
    )
    result = agent.run_turn("go")
    assert result.stopped_reason == "interrupted"
    tool_msgs = [m for m in agent.messages if m["role"] == "tool"]
    assert [m["content"] for m in tool_msgs] == ["echo: a", "[interrupted by user]", "[interrupted by user]"]
    assert agent.run_turn("continue").final_text == "next"  # the history is still valid


def test_a_retried_stream_tells_the_renderer_to_start_over(server, workspace):
    server.add(Reply(content="partial answer that will be cut", drop_after=3), text("whole answer"))
    events = []
    make_agent(server, workspace, events=events).run_turn("hi")
    kinds = [type(e).__name__ for e in events if not isinstance(e, tuple)]
    restart = kinds.index("StreamRestarted")
    shown_after = "".join(e.text for e in events[restart:] if isinstance(e, ev.TextDelta))
    assert shown_after == "whole answer"


def test_an_error_event_inside_the_stream_is_reported_not_called_a_connection_failure(server, workspace):
    from tests.support.scripted_server import RawSSE

    bad = RawSSE([{"error": {"message": "upstream provider exploded", "code": 502}}])
    server.add(bad, bad, bad)
    with pytest.raises(ProviderError, match="in the middle of the reply: upstream provider exploded"):
        make_agent(server, workspace, max_retries=2).run_turn("hi")


def test_an_overflow_error_inside_the_stream_compacts_instead_of_retrying_blindly(server, workspace):
    from tests.support.scripted_server import RawSSE

    server.add(RawSSE([{"error": {"message": "This model's maximum context length is 4096 tokens"}}]), text("fits now"))
    server.handler = lambda body: text("summary")
    agent = make_agent(server, workspace)
    assert agent.run_turn("hi").final_text == "fits now"
    assert agent.settings.window == 4096


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "Wed, 21 Oct 2015 07:28:00 GMT"])
def test_odd_retry_after_values_fall_back_to_backoff(server, workspace, value):
    server.add(Error(429, {"error": {"message": "slow"}}, {"Retry-After": value}), text("ok"))
    events = []
    assert make_agent(server, workspace, events=events).run_turn("hi").final_text == "ok"
    [delay] = [e[1] for e in events if isinstance(e, tuple) and e[0] == "sleep"]
    assert 0 <= delay <= 120


def test_tool_call_deltas_without_index_continue_the_current_call(server, workspace):
    from tests.support.scripted_server import RawSSE

    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta, finish=None):
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    server.add(
        RawSSE(
            [
                chunk(
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {"id": "call_a", "type": "function", "function": {"name": "echo", "arguments": '{"text":'}}
                        ],
                    }
                ),
                chunk({"tool_calls": [{"function": {"arguments": ' "hi"}'}}]}),
                chunk({}, "tool_calls"),
            ]
        ),
        text("done"),
    )
    agent = make_agent(server, workspace)
    agent.run_turn("go")
    assert [m["content"] for m in agent.messages if m["role"] == "tool"] == ["echo: hi"]


def test_the_window_advertised_by_a_llama_cpp_server_scales_budget_caps_and_max_tokens(workspace):
    from tests.support.scripted_server import ScriptedServer

    srv = ScriptedServer(n_ctx=8192)
    try:
        srv.add(text("ok"))
        agent = make_agent(srv, workspace)
        agent.run_turn("hi")
        assert agent.settings.window == 8192
        assert agent.settings.high_water_tokens < 6_000 and agent.ctx.max_output < 5_000
        assert srv.chat_requests()[0]["max_tokens"] <= 2048
    finally:
        srv.close()


def test_an_answer_cut_at_max_tokens_is_flagged(server, workspace):
    server.add(Reply(content="The first half of", finish_reason="length"))
    events = []
    make_agent(server, workspace, events=events).run_turn("explain")
    assert any(isinstance(e, ev.Notice) and "cut at max_tokens" in e.text for e in events)


def test_a_summariser_that_keeps_failing_is_asked_twice_then_the_digest_is_used(server, workspace):
    # Long reasoning beside each call: clearing old outputs alone cannot make room, a summary must.
    steps = iter(
        [*[call("big", {"size": 19_000 + i}, content=prose(12_000, "I think so")) for i in range(8)], text("done")]
    )
    server.handler = lambda body: (
        Error(500, {"error": {"message": "down"}}) if is_summary_request(body) else next(steps)
    )
    agent = make_agent(server, workspace)
    assert agent.run_turn("go").final_text == "done"
    summary_requests = [r for r in server.chat_requests() if is_summary_request(r)]
    assert len(summary_requests) % 2 == 0 and len(summary_requests) >= 2
    assert any(
        m["role"] == "user" and m["content"].startswith("[Earlier conversation was omitted") for m in agent.messages
    )


def test_repeats_are_counted_within_a_turn_not_across_turns(server, workspace):
    server.add(
        call("echo", {"text": "x"}),
        text("a"),
        call("echo", {"text": "x"}),
        text("b"),
        call("echo", {"text": "x"}),
        text("c"),
    )
    agent = make_agent(server, workspace)
    for q in ("one", "two", "three"):
        agent.run_turn(q)
    assert [m["content"] for m in agent.messages if m["role"] == "tool"] == ["echo: x"] * 3


def test_ctrl_c_between_the_assistant_message_and_its_tools_keeps_the_history_valid(server, workspace):
    from nanohermes.context import pairing_problems

    def emit(event):
        if isinstance(event, ev.AssistantMessageDone) and event.has_tool_calls:
            raise KeyboardInterrupt

    server.add(call("echo", {"text": "x"}), text("fine"))
    agent = make_agent(server, workspace)
    agent.emit = emit
    assert agent.run_turn("go").stopped_reason == "interrupted"
    assert pairing_problems(agent.messages) == []
    agent.emit = lambda e: None
    assert agent.run_turn("again").final_text == "fine"


def test_a_broken_preview_still_asks_and_a_no_means_nothing_runs(server, workspace):
    from nanohermes.tools import tool

    def bad_preview(ctx, path):
        raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")

    @tool(params={"path": "p"}, approval=True, preview=bad_preview)
    def risky(ctx, path: str) -> str:
        """Writes."""
        (ctx.workspace / path).write_text("x")
        return "wrote"

    asked = []
    server.add(call("risky", {"path": "f"}), text("ok"))
    agent = make_agent(server, workspace, tools=[risky], mode="ask", approve=lambda t, a, p: asked.append(p) or "no")
    agent.run_turn("go")
    assert asked and "no preview" in asked[0] and not (workspace / "f").exists()


def test_roles_keep_alternating_after_a_failed_turn(server, workspace):
    server.add(Error(401, {"error": {"message": "bad key"}}), text("works now"))
    agent = make_agent(server, workspace)
    with pytest.raises(ProviderError):
        agent.run_turn("first try")
    assert agent.run_turn("second try").final_text == "works now"
    roles = [m["role"] for m in server.chat_requests()[-1]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]


def test_two_calls_taking_turns_are_caught_like_one_call_repeated(server, workspace):
    server.add(*[call("echo", {"text": "a" if i % 2 == 0 else "b"}) for i in range(12)], text("never"))
    agent = make_agent(server, workspace)
    result = agent.run_turn("loop")
    results = [m["content"] for m in agent.messages if m["role"] == "tool"]
    assert results[:4] == ["echo: a", "echo: b", "echo: a", "echo: b"]
    assert results[4].startswith("error: this is repeat number 3")
    assert result.stopped_reason == "limit" and len(results) < 12


def test_a_round_of_three_calls_is_caught_on_its_third_time_round(server, workspace):
    # Read, the same no-op edit, the same failing test: the 1.5B model's round, eleven steps long.
    server.add(*[call("echo", {"text": "abc"[i % 3]}) for i in range(16)], text("never"))
    agent = make_agent(server, workspace)
    result = agent.run_turn("loop")
    results = [m["content"] for m in agent.messages if m["role"] == "tool"]
    assert results[:6] == ["echo: a", "echo: b", "echo: c"] * 2
    assert results[6].startswith("error: this is repeat number 3 of the same echo call")
    assert result.stopped_reason == "limit" and len(results) < 16
