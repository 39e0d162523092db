"""What an editor sees of a call or a turn that did not succeed: a command that exited non-zero is a
failed call, while it runs and when its session is loaded again; the spending cap stops a turn,
said in its text (one real `nanohermes acp` process for the module, as in test_acp.py)."""

import pytest

from nanohermes.storage.session import Session
from tests.acp.test_acp import acp_home, agent, fresh_script, model, new_session, prompt  # noqa: F401
from tests.support.scripted_server import call, text

pytestmark = pytest.mark.subprocess


def test_a_command_that_exits_non_zero_is_a_failed_call(agent, model, ws):  # noqa: F811
    model.add(call("run_command", {"command": "echo broken; exit 3"}), text("It failed with 3."))
    session_id = new_session(agent, ws)
    assert prompt(agent, session_id, "run the check").stop_reason == "end_turn"
    finished = agent.client.of_kind(session_id, "tool_call_update")[-1]
    assert finished.status == "failed" and "broken" in finished.content[0].content.text


def test_a_loaded_sessions_command_that_exited_non_zero_is_a_failed_card(agent, ws, acp_home):  # noqa: F811
    saved = Session(acp_home, "failed-check", workspace=ws)
    saved.record_message({"role": "user", "content": "run the check"})
    command = {"name": "run_command", "arguments": '{"command": "pytest -q"}'}
    saved.record_message(
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": command}]}
    )
    saved.record_message({"role": "tool", "tool_call_id": "c1", "content": "$ pytest -q\n1 failed"}, {"exit_code": 1})
    saved.record_message({"role": "assistant", "content": "One test fails."})
    saved.close()
    agent.run(agent.conn.load_session(cwd=str(ws), session_id="failed-check", mcp_servers=[]))
    (card,) = agent.client.of_kind("failed-check", "tool_call")
    assert card.status == "failed"


def test_the_spending_cap_stops_a_turn_and_says_so(agent, model, ws, acp_home):  # noqa: F811
    config = acp_home / "config.toml"
    config.write_text('max_cost = 0.2\n[prices."test-model"]\ninput = 1000\noutput = 1000\n')  # $0.11 a request
    try:
        model.handler = lambda body: call("run_command", {"command": f"echo {len(model.chat_requests())}"})
        session_id = new_session(agent, ws)
        assert prompt(agent, session_id, "keep going").stop_reason == "max_turn_requests"
    finally:
        config.unlink()
    assert len(model.chat_requests()) == 2
    said = agent.client.text(session_id)
    assert "Stopped at the spending cap: $0.22 spent of max_cost $0.20" in said
