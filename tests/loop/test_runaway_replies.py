"""Replies that run away, through the loop and the scripted server over real HTTP: a passage
repeated in a loop is cut (the stream closed, one copy kept) and the model told; a tool call
written as text is not taken for an answer."""

from __future__ import annotations

import time

from nanohermes import events as ev
from nanohermes.loop.coach.plain import CALL_AS_TEXT_RETRY, REPEATED_RETRY
from nanohermes.ui.plain import usage_line
from tests.support.agents import make_agent
from tests.support.scripted_server import Reply, text
from tests.support.timing import HANG_GUARD_S

PARAGRAPH = (
    "The test fails because parse_port returns the port as a string. Convert it with int() "
    "before returning it and run the tests again.\n\n"
)


def test_a_reply_that_repeats_a_paragraph_is_cut_to_one_copy_and_the_model_told(server, workspace):
    looping = Reply(
        content="I ran the tests.\n\n" + PARAGRAPH * 40, delay=0.005
    )  # ~760 chunks, ~4 s if read to the end
    server.add(looping, text("Fixed: parse_port now returns an int."))
    events = []
    agent = make_agent(server, workspace, events=events)
    result = agent.run_turn("run the tests and fix the cause")
    assert result.final_text == "Fixed: parse_port now returns an int."
    assert result.stop_code is None
    deadline = time.monotonic() + HANG_GUARD_S
    while not server.abandoned and time.monotonic() < deadline:  # the server's thread finds out at its next write
        time.sleep(0.05)
    sent, scripted = server.abandoned[0]
    assert sent < scripted / 4  # the stream was closed soon after the third copy, not read to the end
    second = server.chat_requests()[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "I ran the tests.\n\n" + PARAGRAPH}
    assert second[-1] == {"role": "user", "content": REPEATED_RETRY}
    assert any(isinstance(e, ev.Notice) and "repeating itself" in e.text for e in events)


def test_a_model_that_keeps_looping_ends_with_one_copy_as_its_answer(server, workspace):
    server.add(*[Reply(content=PARAGRAPH * 5) for _ in range(3)])
    agent = make_agent(server, workspace)
    result = agent.run_turn("why does it fail?")
    assert result.final_text == PARAGRAPH
    assert len(server.chat_requests()) == 3  # two retries, then the cut reply is the answer


def test_a_reply_that_is_only_a_call_written_as_text_runs_as_that_call(server, workspace):
    events = []
    server.add(text('```json\n{"name": "echo", "arguments": {"text": "hi"}}\n```'), text("It says hi."))
    result = make_agent(server, workspace, events=events).run_turn("echo hi")
    assert result.final_text == "It says hi."
    call, answer = server.chat_requests()[1]["messages"][-2:]
    assert call["content"] == "" and call["tool_calls"][0]["function"] == {
        "name": "echo",
        "arguments": '{"text": "hi"}',
    }
    assert answer == {"role": "tool", "tool_call_id": call["tool_calls"][0]["id"], "content": "echo: hi"}
    assert any(isinstance(e, ev.Notice) and "run as a call" in e.text for e in events)


def test_a_tool_call_written_as_text_is_not_the_answer(server, workspace):
    written = 'Let me echo it:\n```json\n{"name": "echo", "arguments": {"text": "hi"}}\n```'  # prose too: not sure
    server.add(text(written), text("It says hi."))
    agent = make_agent(server, workspace)
    result = agent.run_turn("echo hi")
    assert result.final_text == "It says hi."
    assert server.chat_requests()[1]["messages"][-1] == {
        "role": "user",
        "content": CALL_AS_TEXT_RETRY.format(name="echo"),
    }


def test_a_reply_cut_for_repeating_leaves_the_others_usage_counted(server, workspace):
    # The cut stream never reaches the usage chunk; the turn used to say the server reported none.
    server.add(
        Reply(content=PARAGRAPH * 40, usage={"prompt_tokens": 900, "completion_tokens": 700}),
        text("Fixed.", usage={"prompt_tokens": 1_000, "completion_tokens": 5}),
    )
    usage = make_agent(server, workspace).run_turn("run the tests and fix the cause").usage
    assert (usage.reported, usage.unreported, usage.requests) == (True, 1, 2)
    assert (usage.prompt_tokens, usage.completion_tokens) == (1_000, 5)
    assert (
        usage_line(usage) == "tokens this turn: 1,000 in, 5 out (2 request(s), 1 without a usage report); cost unknown"
    )
