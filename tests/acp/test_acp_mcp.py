"""MCP through `nanohermes acp`, driven by the SDK's client over real pipes (every message checked
against the protocol's schema; elicitation/create, unstable in ACP, against its unstable schema):
an SDK 2.x server's form (ctx.elicit, three fields) goes to an editor that declared ACP's forms and
its answer, checked, back to the server; the servers' prompts are slash commands the editor is told of."""

import sys

import pytest
from acp.schema import McpServerStdio

from nanohermes.mcp.hub import McpHub
from tests.acp.test_acp import agent_env, new_session, prompt, wait_for
from tests.support.acp_client import AcpHarness
from tests.support.mcp_servers import DEMO_SERVER, demo_settings, toml_for
from tests.support.scripted_server import ScriptedServer, call, text

pytestmark = pytest.mark.subprocess


def book(date: str):
    return call("mcp", {"name": "classic.book_table", "arguments": {"date": date}})


BOOKING = {"check_alternative": True, "alternative_date": "2024-12-27", "party_size": 4}
CLASSIC = McpServerStdio(name="classic", command=sys.executable, args=[DEMO_SERVER, "--classic"], env=[])


@pytest.fixture(scope="module")
def model():
    server = ScriptedServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """config.toml with the rich server, whose prompts a first start (as `mcp list` does) kept."""
    home, ws = tmp_path_factory.mktemp("acp_mcp_home"), tmp_path_factory.mktemp("acp_mcp_ws")
    (home / "config.toml").write_text(toml_for(demo_settings("rich", "--rich")))
    hub = McpHub((demo_settings("rich", "--rich"),), home, ws)
    try:
        hub.tools("rich")
    finally:
        hub.close()
    return home


@pytest.fixture(scope="module")
def editor(model, home, tmp_path_factory):
    log = tmp_path_factory.mktemp("log") / "stderr.log"
    harness = AcpHarness(agent_env(model, home), tmp_path_factory.mktemp("cwd"), log, forms=True)
    yield harness
    assert harness.close() == 0
    assert harness.check.deviations == []
    assert set(harness.check.unstable) <= {"elicitation/create"}  # the form test's own (xdist may split the module)


@pytest.fixture(autouse=True)
def fresh(model, editor):
    model.script.clear()
    model.requests.clear()
    editor.client.forms.clear()


def tool_results(model) -> list[str]:
    return [m["content"] for m in model.chat_requests()[-1]["messages"] if m["role"] == "tool"]


def test_a_form_of_several_fields_goes_to_an_editor_that_declared_forms_and_its_answer_to_the_server(editor, model, ws):
    model.add(book("2024-12-25"), book("2024-12-26"), book("2024-12-31"), text("Done."))
    session_id = editor.run(editor.conn.new_session(cwd=str(ws), mcp_servers=[CLASSIC])).session_id
    editor.run(editor.conn.set_session_mode(session_id=session_id, mode_id="auto"))  # the calls ask nothing
    editor.client.form_answers = [BOOKING, {**BOOKING, "party_size": "four"}, "cancel"]
    prompt(editor, session_id, "book three times")
    accepted, unfit, cancelled = tool_results(model)
    assert accepted == f"mcp classic.book_table:\n[SUCCESS] {BOOKING}"
    assert "[DECLINE] no booking made" in unfit and "did not fit the form (party_size)" in unfit
    assert cancelled == "mcp classic.book_table:\n[CANCEL] no booking made"
    assert "elicitation/create" in editor.check.unstable  # the one unstable method, checked against its schema
    message, mode = editor.client.forms[0]
    assert message == "classic asks: No tables available on 2024-12-25. Try another date?"
    assert mode.session_id == session_id and mode.tool_call_id  # about the call's own card
    schema = mode.requested_schema
    assert list(schema.properties) == ["check_alternative", "alternative_date", "party_size"]
    assert schema.required == ["check_alternative"]
    assert [schema.properties[name].type for name in schema.properties] == ["boolean", "string", "integer"]


def test_the_servers_prompts_are_announced_and_run_as_slash_commands(editor, model, ws):
    session_id = new_session(editor, ws)
    wait_for(lambda: editor.client.of_kind(session_id, "available_commands_update"))
    (announced,) = editor.client.of_kind(session_id, "available_commands_update")
    review = next(c for c in announced.available_commands if c.name == "rich:review")
    assert review.description == "Review a file." and review.input.root.hint == "path=… [focus=…]"
    model.add(text("Reviewed."))
    prompt(editor, session_id, "/rich:review a.py")
    assert model.chat_requests()[-1]["messages"][-1]["content"] == "Please review a.py, looking for bugs."
    before = len(model.chat_requests())
    prompt(editor, session_id, "/rich:review")
    assert len(model.chat_requests()) == before and "needs path" in editor.client.text(session_id)


def test_a_prompt_of_a_server_never_listed_runs_and_is_announced_after(editor, model, ws):
    unlisted = McpServerStdio(name="unlisted", command=sys.executable, args=[DEMO_SERVER, "--classic"], env=[])
    session_id = editor.run(editor.conn.new_session(cwd=str(ws), mcp_servers=[unlisted])).session_id
    wait_for(lambda: editor.client.of_kind(session_id, "available_commands_update"))
    (first,) = editor.client.of_kind(session_id, "available_commands_update")
    assert "unlisted:commit_message" not in [c.name for c in first.available_commands]
    model.add(text("feat: fix the login bug"))
    prompt(editor, session_id, "/unlisted:commit_message fix the login bug")
    sent = model.chat_requests()[-1]["messages"][-1]["content"]
    assert sent == "Write a conventional commit message for: fix the login bug"
    wait_for(lambda: len(editor.client.of_kind(session_id, "available_commands_update")) == 2)
    now = editor.client.of_kind(session_id, "available_commands_update")[-1]
    assert "unlisted:commit_message" in [c.name for c in now.available_commands]
