"""Property: whatever the model and the server do, the history stays valid and the session
file replays to exactly the working set that is sent."""

import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nanohermes.context import pairing_problems
from nanohermes.errors import ProviderError
from nanohermes.tools import tool
from tests.support.agents import TEST_TOOLS, make_agent
from tests.support.scripted_server import Error, Reply, ScriptedServer, is_summary_request, text


@tool(params={"n": "n"})
def interrupt(ctx, n: int) -> str:
    """Stands for the user's Ctrl-C while a tool runs."""
    raise KeyboardInterrupt


TOOL_CALLS = st.sampled_from(
    [
        ("echo", '{"text": "hi"}'),
        ("big", '{"size": 30000}'),
        ("explode", '{"message": "x"}'),
        ("nope", "{}"),
        ("echo", '{"text": '),
        ("interrupt", '{"n": 1}'),
        ("echo", '{"text": "中文 ✓"}'),
    ]
)
TOOL_STEP = st.builds(lambda calls: Reply(tool_calls=calls), st.lists(TOOL_CALLS, min_size=1, max_size=3))
STEP = st.one_of(
    st.builds(lambda t: text(t), st.text(min_size=1, max_size=40)),
    TOOL_STEP,
    TOOL_STEP,
    TOOL_STEP,  # the common case, and where the interesting failures are
    st.just(Error(500, {"error": {"message": "flaky"}})),
    st.just(
        Error(400, {"error": {"message": "maximum context length is 4096 tokens", "code": "context_length_exceeded"}})
    ),
    st.just(Reply(tool_calls=[("echo", '{"text": "cut')], finish_reason="length")),
    st.just(Reply(content="dropped mid-way", drop_after=2)),
)


@example(
    turns=[
        [Reply(tool_calls=[("echo", '{"text": "hi"}'), ("interrupt", '{"n": 1}'), ("echo", '{"text": "x"}')])],
        [text("next")],
    ]
)
@example(
    turns=[
        [
            Error(400, {"error": {"message": "maximum context length is 4096 tokens"}}),
            Reply(tool_calls=[("big", '{"size": 30000}')]),
        ]
    ]
)
@example(
    turns=[
        [Reply(tool_calls=[("echo", '{"text": "cut')], finish_reason="length"), Reply(content="x", drop_after=2)],
        [],
    ]
)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(turns=st.lists(st.lists(STEP, max_size=6), min_size=1, max_size=3))
def test_any_model_behaviour_leaves_a_valid_history_that_the_session_replays_exactly(
    turns, workspace, tmp_path_factory, monkeypatch
):
    monkeypatch.setenv("NANOHERMES_HOME", str(tmp_path_factory.mktemp("home")))
    server = ScriptedServer()
    try:
        server.handler = lambda body: text("summary") if is_summary_request(body) else text("done")
        agent = make_agent(
            server, workspace, tools=[*TEST_TOOLS, interrupt], session_name="prop", max_steps=8, max_retries=1
        )
        for steps in turns:
            server.script.extend(steps)
            try:
                agent.run_turn("do the thing")
            except ProviderError:
                pass  # the REPL prints it and goes on; the history must still be valid
            server.script.clear()
            sent = agent.messages  # what the next request sends (valid: nothing to mend)
            assert all(pairing_problems(body["messages"]) == [] for body in server.chat_requests())
            assert pairing_problems(agent.messages) == []
            assert sent[0]["role"] == "system" and all(m["role"] != "system" or i <= 1 for i, m in enumerate(sent))
            assert json.dumps(sent, ensure_ascii=False)  # always serialisable
        agent.session.close()
        resumed = make_agent(server, workspace, tools=[*TEST_TOOLS, interrupt], session_name="prop")
        assert resumed.messages[1:] == agent.messages[1:]
        resumed.session.close()
    finally:
        server.close()
