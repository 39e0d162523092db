"""An editor sees a command that exited non-zero as a failed call, while it runs and when its
session is loaded again (one real `nanohermes acp` process for the module, as in test_acp.py)."""

from nanohermes.storage.session import Session
from tests.acp.test_acp import acp_home, agent, fresh_script, model, new_session, prompt  # noqa: F401
from tests.support.scripted_server import call, text


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
