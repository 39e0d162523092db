"""A server's sampling request (`sampling/createMessage`), through the real runtime: a real SDK
server over stdio (tests/support/mcp_demo_server.py --rich, its `greet` tool samples) and the
scripted model server. The user approves each request; the model gets the server's text alone,
tools off, its budget capped; where nothing can ask, or the user says no, the server gets an
error and the tool's result says so."""

from types import SimpleNamespace

import pytest

from nanohermes.mcp.asking import ACCEPT, CANNOT_ASK, Reply
from nanohermes.mcp.sampling import APPROVE, DECLINED, MAX_SAMPLING_TOKENS, request_for
from nanohermes.runtime import build_runtime
from tests.support.mcp_servers import demo_settings, tool_results
from tests.support.scripted_server import Error, call, text

pytestmark = pytest.mark.subprocess

GREET = call("mcp", {"name": "rich.greet", "arguments": {"text": "Ada"}})
NO_MODEL = Error(400, {"error": {"message": "no such model", "type": "invalid_request_error"}})


def test_an_approved_request_is_answered_by_the_model_tools_off_and_a_no_a_failure_or_p_are_errors(configure, server):
    """One session (one server start): approved; declined, then approved but the model fails; a -p run."""
    asked, answers = [], iter([True, False, True])

    def ask_user(question):
        asked.append(question)
        return Reply(ACCEPT, {APPROVE: next(answers)})

    server.add(GREET, text("Hello, Ada!"), text("done"))  # the tool call, the sampling request, the answer
    server.add(GREET, GREET, NO_MODEL, text("done"), GREET, text("done"))
    settings = demo_settings("rich", "--rich", trusted=True)
    runtime = build_runtime(configure(settings), None, lambda e: None, None, ask_user=ask_user)
    try:
        runtime.agent.run_turn("greet Ada")
        spent = runtime.agent.sender.spent.requests
        runtime.agent.run_turn("greet Ada twice")
        runtime.configured.mcp.ask_user = None  # as in a -p run
        runtime.agent.run_turn("once more")
    finally:
        runtime.close()
    greeted, declined, failed, cannot = tool_results(server)
    assert greeted.startswith("mcp rich.greet:\nthe model (") and greeted.endswith(") said: Hello, Ada!")
    sampling = server.chat_requests()[1]
    assert "tools" not in sampling and sampling["max_tokens"] == MAX_SAMPLING_TOKENS  # it asked for 50,000
    system, user = sampling["messages"]
    assert system["role"] == "system" and system["content"].startswith("You greet people.")  # its own, not ours
    assert user == {
        "role": "user",
        "content": "Say hello to Ada.\n[image content left out: this client sends the model text only]",
    }
    question = asked[0]
    assert question.server == "rich" and "It asks: You greet people." in question.message
    assert "Say hello to Ada." in question.message and "\x1b" not in question.message
    assert [(f.name, f.kind) for f in question.fields] == [(APPROVE, "boolean")]
    assert spent == 3  # the sampling request is the session's too
    assert declined.startswith("error:") and DECLINED in declined
    assert "the model call failed" in failed and "no such model" in failed
    assert CANNOT_ASK in cannot and len(asked) == 3
    assert len(server.chat_requests()) == 9  # a declined request never reached the model


def test_the_request_is_text_only_and_its_budget_capped():
    block = SimpleNamespace(type="text", text="hi")
    params = SimpleNamespace(
        messages=[SimpleNamespace(role="assistant", content=block), SimpleNamespace(role="user", content=[block])],
        system_prompt=None,
        max_tokens=10,
    )
    request = request_for("srv", params)
    assert request.max_tokens == 10 and request.messages == [
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": "hi"},
    ]
