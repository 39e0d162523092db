"""One history type: a tool call's result is recorded once, by the transcript, with its message,
its facts and its full output redacted together; the session, the request, the outputs store
(`recall`, /show, compaction's placeholders) and a resumed session all read that one record."""

from __future__ import annotations

import json

import pytest

from nanohermes import events as ev
from nanohermes.calls import ResultFacts
from nanohermes.errors import ToolInterrupted
from nanohermes.redact import Redactor
from nanohermes.tools import ToolOutput, tool
from nanohermes.tools.recall import recall
from tests.support.agents import TEST_TOOLS, make_agent
from tests.support.scripted_server import call, calls, text

SECRET = "ghp_demo_0123456789abcdefXYZ"
REDACTED = "[redacted: DEMO_TOKEN]"
# Known to the tools' context only: the provider redacts what it sends with the config's secrets,
# which do not hold this one, so a secret in a request here is one the transcript let through.
SECRETS = Redactor.of([("DEMO_TOKEN", SECRET)])
CUT_AFTER = 25_000  # past the 20,000-byte result cap: the model sees less than the full output


@tool(params={})
def leaky(ctx) -> str:
    """A command's output quoting a secret in its head, its cut middle and its facts."""
    output = f"token {SECRET}\n" + "y" * CUT_AFTER + f"\nend {SECRET}"
    facts = ResultFacts(path=f"logs/{SECRET}.txt", exit_code=1, found=f"found {SECRET}", tail=f"end {SECRET}")
    return ToolOutput(output, facts)


@tool(params={"text": ""})
def stopped(ctx, text: str) -> str:
    """Stops as Ctrl-C stops a command, with what it had printed."""
    facts = ResultFacts(exit_code=None, tail=f"last {SECRET}", output_lines=2)
    raise ToolInterrupted(f"[interrupted: printed {SECRET}]", full=f"all of it: {SECRET}\n{text}", facts=facts)


TOOLS = [*TEST_TOOLS, leaky, stopped, recall]


def events_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_result_is_recorded_once_redacted_in_its_message_facts_and_full_output(server, workspace):
    server.add(call("leaky", {}), text("seen"))
    events = []
    agent = make_agent(server, workspace, tools=TOOLS, redactor=SECRETS, events=events, session_name="once")
    agent.run_turn("go")
    call_id = server.chat_requests()[1]["messages"][-2]["tool_calls"][0]["id"]
    sent = json.dumps(server.chat_requests(), ensure_ascii=False)
    assert SECRET not in sent and f"token {REDACTED}" in sent  # the message the model got
    saved = agent.session.path.read_text()
    assert SECRET not in saved
    recorded = [
        e for e in events_of(agent.session.path) if call_id in (e.get("id"), e.get("message", {}).get("tool_call_id"))
    ]
    assert [e["type"] for e in recorded] == ["message", "tool_output"]  # once: the message, then the full output
    message, output = recorded
    assert message["facts"] == {
        "path": f"logs/{REDACTED}.txt",
        "exit_code": 1,
        "found": f"found {REDACTED}",
        "tail": f"end {REDACTED}",
        "cut_bytes": message["facts"]["cut_bytes"],
    }
    assert output["full"].endswith(f"\nend {REDACTED}") and output["full"] == agent.full_output(call_id)
    assert agent.transcript.outputs.facts()[call_id].tail == f"end {REDACTED}"  # what placeholders quote
    finished = next(e for e in events if isinstance(e, ev.ToolFinished))  # what a front end is shown
    assert finished.summary == f"token {REDACTED}" and finished.facts.path == f"logs/{REDACTED}.txt"


def test_recall_and_a_resumed_session_return_the_one_redacted_record(server, workspace):
    server.add(call("leaky", {}), text("seen"))
    agent = make_agent(server, workspace, tools=TOOLS, redactor=SECRETS, session_name="recalled")
    agent.run_turn("go")
    call_id = server.chat_requests()[1]["messages"][-2]["tool_calls"][0]["id"]
    server.add(call("recall", {"id": call_id, "offset": CUT_AFTER}), text("read"))
    agent.run_turn("the end of it?")
    returned = server.chat_requests()[-1]["messages"][-1]["content"]
    assert returned.startswith(f"recall {call_id} ") and returned.endswith(f"\nend {REDACTED}")
    agent.session.close()
    resumed = make_agent(server, workspace, tools=TOOLS, redactor=SECRETS, session_name="recalled")
    assert resumed.full_output(call_id) == agent.full_output(call_id)  # read back from the session file
    assert resumed.transcript.outputs.facts()[call_id].found == f"found {REDACTED}"
    assert SECRET not in resumed.full_output(call_id)


def test_a_stopped_calls_result_is_what_it_kept_recorded_once_and_the_next_call_is_answered(server, workspace):
    server.add(calls(("stopped", {"text": "more"}), ("echo", {"text": "never run"})))
    agent = make_agent(server, workspace, tools=TOOLS, redactor=SECRETS, session_name="stopped")
    result = agent.run_turn("go")
    assert result.stop_code == ev.StopCode.INTERRUPTED
    first, second = [m for m in agent.messages if m["role"] == "tool"]
    assert first["content"] == f"[interrupted: printed {REDACTED}]" and second["content"] == "[interrupted by user]"
    assert agent.full_output(first["tool_call_id"]) == f"all of it: {REDACTED}\nmore"
    facts = agent.transcript.outputs.facts()[first["tool_call_id"]]
    assert facts.interrupted and facts.tail == f"last {REDACTED}"
    saved = events_of(agent.session.path)
    assert SECRET not in agent.session.path.read_text()
    ids = [e["message"]["tool_call_id"] for e in saved if e["type"] == "message" and e["message"]["role"] == "tool"]
    assert ids == [first["tool_call_id"], second["tool_call_id"]]  # one result each, in the calls' order
    server.add(text("ok"))
    agent.run_turn("and now?")
    assert SECRET not in json.dumps(server.chat_requests()[-1], ensure_ascii=False)


def test_only_the_transcripts_add_result_records_a_tool_message(server, workspace):
    agent = make_agent(server, workspace)
    with pytest.raises(TypeError, match="add_result"):
        agent.transcript.add({"role": "tool", "tool_call_id": "c1", "content": "x"})
