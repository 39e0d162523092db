"""ACP over a pipe, with a real `nanohermes acp`: loading a session saved in another folder
warns as the CLI's resume does; a tool call's `locations` name only places inside the
workspace, and a refused call is left with none; a helper's approval question is about the
helper's own command card, not the parent's `task` card."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import text_block

from nanohermes.storage.session import Session
from tests.support.acp_client import AcpHarness, workspace
from tests.support.scripted_server import ScriptedServer, call, text

pytestmark = pytest.mark.subprocess


@pytest.fixture(scope="module")
def model():
    server = ScriptedServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def acp_home(tmp_path_factory):
    return tmp_path_factory.mktemp("acp_home")


@pytest.fixture(scope="module")
def agent(model, acp_home, tmp_path_factory):
    env = {
        "NANOHERMES_HOME": str(acp_home),
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": model.url,
        "NANOHERMES_MODEL": "test-model",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "NO_COLOR": "1",
    }
    harness = AcpHarness(env, tmp_path_factory.mktemp("acp_cwd"), tmp_path_factory.mktemp("acp_log") / "stderr.log")
    yield harness
    assert harness.close() == 0


@pytest.fixture(autouse=True)
def fresh_script(model, agent):
    model.script.clear()
    model.requests.clear()
    agent.client.answer = "allow"
    agent.client.questions.clear()


@pytest.fixture
def ws(tmp_path):
    return workspace(tmp_path, "hello\n")


def new_session(agent, ws) -> str:
    return agent.run(agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id


def prompt(agent, session_id: str, words: str):
    return agent.run(agent.conn.prompt(session_id=session_id, prompt=[text_block(words)]))


def test_loading_a_session_saved_in_another_folder_warns_naming_both(agent, acp_home, ws, tmp_path):
    elsewhere = tmp_path / "other-project"
    elsewhere.mkdir()
    saved = Session(acp_home, "from-elsewhere", workspace=elsewhere)
    saved.record_message({"role": "user", "content": "hello there"})
    saved.record_message({"role": "assistant", "content": "hi"})
    saved.close()
    agent.run(agent.conn.load_session(cwd=str(ws), session_id="from-elsewhere", mcp_servers=[]))
    thoughts = [u.content.text for u in agent.client.of_kind("from-elsewhere", "agent_thought_chunk")]
    assert any(f"started in {elsewhere}" in t and f"now act in {ws}" in t for t in thoughts), thoughts


def test_locations_name_only_places_inside_the_workspace_and_none_for_a_refused_call(agent, model, ws):
    model.add(
        call("read_file", {"path": "notes.txt"}),
        call("read_file", {"path": "/etc/passwd"}),
        call("read_file", {"path": "../outside.txt"}),
        text("done"),
    )
    agent.client.answer = "reject"  # a read outside the workspace asks: refused
    session_id = new_session(agent, ws)
    prompt(agent, session_id, "read them")
    started = agent.client.of_kind(session_id, "tool_call")
    assert started[0].locations[0].path == str(ws / "notes.txt")
    assert [s.locations for s in started[1:]] == [None, None]
    finished = agent.client.of_kind(session_id, "tool_call_update")
    assert all(u.locations == [] for u in finished if u.status == "failed")
    assert all(loc.path.startswith(str(ws)) for u in [*started, *finished] for loc in (u.locations or ()))


def test_a_helpers_question_is_about_the_helpers_command_card(agent, model, ws):
    model.add(
        call("task", {"description": "write a note", "prompt": "write done.txt saying done"}),
        call("write_file", {"path": "done.txt", "content": "done\n"}),  # the helper's call: asks in ask mode
        text("wrote it"),  # the helper's answer
        text("the helper wrote it"),  # the parent's
    )
    session_id = new_session(agent, ws)
    prompt(agent, session_id, "delegate it")
    (_, question, _), *_ = agent.client.questions
    cards = {u.tool_call_id: u for u in agent.client.of_kind(session_id, "tool_call")}
    parent = next(i for i, u in cards.items() if u.title.startswith("task"))
    assert question.tool_call_id != parent and question.tool_call_id in cards
    assert question.tool_call_id.startswith(parent + "/") and question.title == cards[question.tool_call_id].title
    assert "write a note" in question.title and (ws / "done.txt").read_text() == "done\n"
