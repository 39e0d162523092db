"""`nanohermes acp` end to end: one real agent process per module, driven over its stdin and
stdout by the SDK's client side, against the scripted model server. Each test opens sessions
of its own in that one process."""

import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from acp import RequestError, text_block

from nanohermes.storage.session import Session
from tests.support.acp_client import AcpHarness
from tests.support.processes import NEEDS_SIGHUP, alive
from tests.support.scripted_server import POLL, ScriptedServer, call, text
from tests.support.timing import HANG_GUARD_S

pytestmark = pytest.mark.subprocess

CANCEL_WITHIN_S = HANG_GUARD_S  # a cancelled `sleep 120` must end far sooner than the command would


@pytest.fixture(scope="module")
def model():
    server = ScriptedServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def acp_home(tmp_path_factory):
    return tmp_path_factory.mktemp("acp_home")


def agent_env(model, home) -> dict:
    return {
        "NANOHERMES_HOME": str(home),
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": model.url,
        "NANOHERMES_MODEL": "test-model",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "NO_COLOR": "1",
    }


@pytest.fixture(scope="module")
def agent(model, acp_home, tmp_path_factory):
    harness = AcpHarness(
        agent_env(model, acp_home),
        tmp_path_factory.mktemp("acp_cwd"),
        tmp_path_factory.mktemp("acp_log") / "stderr.log",
    )
    yield harness
    assert harness.close() == 0  # the agent ends by itself when the editor closes its stdin
    assert harness.check.deviations == []  # every message the agent sent, in every test of the module


@pytest.fixture(autouse=True)
def fresh_script(model, agent):
    model.script.clear()
    model.requests.clear()
    model.handler = None
    agent.client.answer = "allow"
    agent.client.asked.clear()


def new_session(agent, ws) -> str:
    return agent.run(agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id


def prompt(agent, session_id: str, words: str):
    return agent.run(agent.conn.prompt(session_id=session_id, prompt=[text_block(words)]))


def wait_for(condition, timeout: float = HANG_GUARD_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_initialize_says_what_the_agent_can_do(agent):
    info = agent.initialized
    assert info.agent_info.name == "nanohermes" and info.agent_capabilities.load_session
    assert info.agent_capabilities.session_capabilities.list is not None


def test_a_prompt_streams_text_and_tool_calls_with_their_status(agent, model, ws):
    model.add(call("read_file", {"path": "notes.txt"}, content="Let me look."), text("The secret is 42."))
    session_id = new_session(agent, ws)
    response = prompt(agent, session_id, "what is the secret?")
    assert response.stop_reason == "end_turn"
    assert agent.client.text(session_id) == "Let me look.The secret is 42."
    (started,), (finished,) = (
        agent.client.of_kind(session_id, "tool_call"),
        agent.client.of_kind(session_id, "tool_call_update"),
    )
    assert (started.title, started.kind, started.status) == ("read_file path=notes.txt", "read", "in_progress")
    assert started.locations[0].path == str(ws / "notes.txt") and started.raw_input == {"path": "notes.txt"}
    assert finished.tool_call_id == started.tool_call_id and finished.status == "completed"
    assert "the secret is 42" in finished.content[0].content.text
    assert model.chat_requests()[0]["messages"][-1]["content"].startswith("what is the secret?")


def test_an_edit_asks_the_editor_and_its_diff_is_sent_and_always_covers_that_path(agent, model, ws):
    model.add(
        call("write_file", {"path": "notes.txt", "content": "the secret is 43\n"}),
        call("write_file", {"path": "notes.txt", "content": "the secret is 44\n"}),
        text("Changed it twice."),
    )
    agent.client.answer = "always"
    session_id = new_session(agent, ws)
    assert prompt(agent, session_id, "change the secret").stop_reason == "end_turn"
    ((asked_in, question, options),) = agent.client.questions[-1:]
    card = agent.client.of_kind(session_id, "tool_call")[0]
    assert asked_in == session_id and question.tool_call_id == card.tool_call_id and card.status == "pending"
    assert question.title == card.title == "write_file path=notes.txt" and question.status is None
    asked = question.content[0]  # the change itself, as the editor shows a diff
    assert (asked.type, asked.path, asked.old_text, asked.new_text) == (
        "diff",
        str(ws / "notes.txt"),
        "the secret is 42\n",
        "the secret is 43\n",
    )
    assert [(o.option_id, o.kind) for o in options] == [
        ("allow", "allow_once"),
        ("always", "allow_always"),
        ("reject", "reject_once"),
    ]
    assert options[1].name == "Always allow: write_file and edit_file on notes.txt"
    assert len([q for q in agent.client.questions if q[0] == session_id]) == 1  # "always" covered the second write
    running, first, second = agent.client.of_kind(session_id, "tool_call_update")
    assert running.status == "in_progress" and (first.status, second.status) == ("completed", "completed")
    diff = first.content[1]
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == (
        "diff",
        str(ws / "notes.txt"),
        "the secret is 42\n",
        "the secret is 43\n",
    )
    assert second.content[1].old_text == "the secret is 43\n" and (ws / "notes.txt").read_text() == "the secret is 44\n"


def test_allow_always_is_saved_for_the_project_so_a_new_session_there_does_not_ask(agent, model, ws):
    outside = {"command": "touch made.txt", "unsandboxed": True, "reason": "to try"}
    model.add(call("run_command", outside), text("made"))
    agent.client.answer = "always"
    first = new_session(agent, ws)
    prompt(agent, first, "make a file")
    ((_, _, options),) = [q for q in agent.client.questions if q[0] == first]
    assert options[1].name == "Always allow: run_command exactly, outside the sandbox: touch made.txt"
    (ws / "made.txt").unlink()
    model.add(call("run_command", outside), text("made again"))
    agent.client.answer = "reject"
    second = new_session(agent, ws)
    prompt(agent, second, "make it again")
    assert (ws / "made.txt").exists() and not [q for q in agent.client.questions if q[0] == second]


def test_a_command_naming_a_path_outside_offers_no_always_to_the_editor(agent, model, ws):
    model.add(call("run_command", {"command": "touch ../made.txt", "unsandboxed": True, "reason": "x"}), text("no"))
    agent.client.answer = "reject"
    session_id = new_session(agent, ws)
    prompt(agent, session_id, "make a file next door")
    ((_, _, options),) = [q for q in agent.client.questions if q[0] == session_id]
    assert [o.kind for o in options] == ["allow_once", "reject_once"] and not (ws.parent / "made.txt").exists()


def test_accept_edits_is_a_mode_the_editor_can_choose_and_edits_then_ask_nothing(agent, model, ws):
    model.add(call("write_file", {"path": "notes.txt", "content": "the secret is 43\n"}), text("Changed."))
    session_id = new_session(agent, ws)
    modes = agent.run(agent.conn.load_session(cwd=str(ws), session_id=session_id, mcp_servers=[])).modes
    assert "accept-edits" in [m.id for m in modes.available_modes]
    agent.run(agent.conn.set_session_mode(session_id=session_id, mode_id="accept-edits"))
    prompt(agent, session_id, "change the secret")
    assert (ws / "notes.txt").read_text() == "the secret is 43\n"
    assert not [q for q in agent.client.questions if q[0] == session_id]
    assert "Mode: accept-edits." in model.chat_requests()[-1]["messages"][0]["content"]


def test_a_rejected_action_is_not_run_and_the_model_is_told(agent, model, ws):
    outside = {"command": "touch made.txt", "unsandboxed": True, "reason": "to try"}  # sandboxed ones don't ask
    model.add(call("run_command", outside), text("OK, I did not."))
    agent.client.answer = "reject"
    session_id = new_session(agent, ws)
    prompt(agent, session_id, "make a file")
    assert not (ws / "made.txt").exists()
    assert model.chat_requests()[-1]["messages"][-1]["content"].startswith(
        "refused: the user declined this run_command call"
    )
    assert agent.client.of_kind(session_id, "tool_call_update")[-1].status == "failed"


def test_cancel_stops_a_running_command_at_once_answers_every_open_call_and_the_session_goes_on(agent, model, ws):
    model.add(call("run_command", {"command": "sleep 120"}), text("Stopped, as you asked."))
    agent.client.answer = "allow"
    session_id = new_session(agent, ws)
    started = time.monotonic()
    pending = agent.start(agent.conn.prompt(session_id=session_id, prompt=[text_block("wait a while")]))
    wait_for(
        lambda: any(
            u.session_update == "tool_call" and u.status == "in_progress" for u in agent.client.updates[session_id]
        )
    )
    time.sleep(0.3)  # the command is running
    agent.run(agent.conn.cancel(session_id=session_id))
    assert pending.result(CANCEL_WITHIN_S).stop_reason == "cancelled" and time.monotonic() - started < CANCEL_WITHIN_S
    last = agent.client.of_kind(session_id, "tool_call_update")[-1]
    kept = last.content[0].content.text  # what the command had printed, kept for the editor and the model
    assert last.status == "failed" and kept.startswith("$ sleep 120\ninterrupted by the user after")
    assert prompt(agent, session_id, "are you there?").stop_reason == "end_turn"
    sent = model.chat_requests()[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "tool"] == [kept]


def test_cancel_while_the_editor_is_asking_stops_the_turn_and_runs_nothing(agent, model, ws):
    model.add(call("run_command", {"command": "touch asked.txt", "unsandboxed": True}), text("never"))
    agent.client.answer = "wait"
    session_id = new_session(agent, ws)
    pending = agent.start(agent.conn.prompt(session_id=session_id, prompt=[text_block("make it")]))
    assert agent.client.asked.wait(20)
    agent.run(agent.conn.cancel(session_id=session_id))
    agent.loop.call_soon_threadsafe(agent.client.cancelled)
    assert pending.result(CANCEL_WITHIN_S).stop_reason == "cancelled" and not (ws / "asked.txt").exists()
    assert agent.client.of_kind(session_id, "tool_call_update")[-1].status == "failed"


def test_a_saved_session_loads_with_its_history_and_goes_on(agent, model, ws, acp_home):
    saved = Session(acp_home, "saved-chat", workspace=ws)
    saved.record_message({"role": "user", "content": "remember the colour blue"})
    saved.record_message(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "notes.txt"}'},
                }
            ],
        }
    )
    saved.record_message(
        {"role": "tool", "tool_call_id": "c1", "content": "read_file notes.txt lines 1–1 of 1\nthe secret is 42"}
    )
    saved.record_message({"role": "assistant", "content": "Blue it is."})
    saved.close()
    listed = agent.run(agent.conn.list_sessions(cwd=str(ws))).sessions
    assert [(s.session_id, s.title) for s in listed] == [("saved-chat", "remember the colour blue")]
    agent.run(agent.conn.load_session(cwd=str(ws), session_id="saved-chat", mcp_servers=[]))
    kinds = [u.session_update for u in agent.client.updates["saved-chat"]]
    assert kinds == ["available_commands_update", "user_message_chunk", "tool_call", "agent_message_chunk"]
    card = agent.client.of_kind("saved-chat", "tool_call")[0]  # the call with its outcome, in one card
    assert card.status == "completed" and card.content[0].content.text.endswith("the secret is 42")
    model.add(text("You said blue."))
    prompt(agent, "saved-chat", "which colour?")
    contents = [m.get("content") for m in model.chat_requests()[-1]["messages"]]
    assert contents[1] == "remember the colour blue" and contents[4] == "Blue it is."


def test_two_sessions_turns_run_at_once_each_in_its_own_workspace(agent, model, ws, tmp_path):
    other_ws = tmp_path / "other"
    other_ws.mkdir()
    beta_asked, alpha_waited = threading.Event(), []

    def handler(body):  # alpha's reply waits for beta's request: one after the other would never get there
        word = body["messages"][-1]["content"].split()[0]
        if word == "beta":
            beta_asked.set()
        else:
            alpha_waited.append(beta_asked.wait(20))
        return text(f"answer to {word}", delay=0.05, chunk_size=2)

    model.handler = handler
    first, second = new_session(agent, ws), new_session(agent, other_ws)
    one = agent.start(agent.conn.prompt(session_id=first, prompt=[text_block("alpha")]))
    wait_for(lambda: model.chat_requests())  # the first turn is asking
    two = agent.start(agent.conn.prompt(session_id=second, prompt=[text_block("beta")]))
    assert one.result(30).stop_reason == two.result(30).stop_reason == "end_turn"
    assert alpha_waited == [True]  # beta's turn asked while alpha's was still waiting for its reply
    assert agent.client.text(first) == "answer to alpha" and agent.client.text(second) == "answer to beta"
    assert sorted(r["messages"][-1]["content"] for r in model.chat_requests()) == ["alpha", "beta"]
    workspaces = {r["messages"][0]["content"].split("Workspace: ")[1].split(" ")[0] for r in model.chat_requests()}
    assert workspaces == {str(ws), str(other_ws)}


def test_a_cancel_stops_its_own_sessions_turn_and_not_the_other_running_at_once(agent, model, ws, tmp_path):
    other_ws = tmp_path / "other"
    other_ws.mkdir()
    model.add(
        call("run_command", {"command": "sleep 120"}),
        call("run_command", {"command": "sleep 2 && echo slept"}),
        text("Stopped."),
        text("Slept."),
    )
    first, second = new_session(agent, ws), new_session(agent, other_ws)
    one = agent.start(agent.conn.prompt(session_id=first, prompt=[text_block("wait long")]))
    wait_for(lambda: agent.client.of_kind(first, "tool_call"))
    two = agent.start(agent.conn.prompt(session_id=second, prompt=[text_block("wait a bit")]))
    wait_for(lambda: agent.client.of_kind(second, "tool_call"))
    agent.run(agent.conn.cancel(session_id=first))
    assert one.result(CANCEL_WITHIN_S).stop_reason == "cancelled" and not two.done()
    assert two.result(30).stop_reason == "end_turn"
    assert agent.client.of_kind(second, "tool_call_update")[-1].status == "completed"


def test_a_web_fetch_to_a_local_address_asks_the_editor_with_the_address(agent, model, ws):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"the local admin page"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    site = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=site.serve_forever, args=(POLL,), daemon=True).start()
    try:
        url = f"http://127.0.0.1:{site.server_address[1]}/admin"
        model.add(call("web_fetch", {"url": url}), text("Fetched."))
        session_id = new_session(agent, ws)
        prompt(agent, session_id, "read the admin page")
    finally:
        site.shutdown()
        site.server_close()
    ((_, question, options),) = [q for q in agent.client.questions if q[0] == session_id]
    (card,) = agent.client.of_kind(session_id, "tool_call")
    assert question.title == card.title and card.title.startswith("web_fetch url=http://127.0.0.1:")
    assert card.status == "in_progress" and question.status is None  # asked while it runs: it stays running
    assert "127.0.0.1 is 127.0.0.1, a loopback address" in question.content[0].content.text
    assert options[1].name == "Always allow: web_fetch (any arguments)"
    assert "the local admin page" in model.chat_requests()[-1]["messages"][-1]["content"]


def test_plan_mode_offers_only_read_only_tools_and_its_plan_is_sent_as_the_sessions_plan(agent, model, ws):
    model.add(
        text(
            "Here is my plan:\n\n1. **Read** `notes.txt`\n   - note the secret\n2. Change the secret to 43:\n\nShall I?"
        ),
        text("The secret is 42."),
    )
    session_id = new_session(agent, ws)
    agent.run(agent.conn.set_session_mode(session_id=session_id, mode_id="plan"))
    prompt(agent, session_id, "plan it")
    offered = {t["function"]["name"] for t in model.chat_requests()[-1]["tools"]}
    assert (
        "read_file" in offered and not offered & {"write_file", "edit_file"} and "run_command" in offered
    )  # read-only there
    assert "Mode: plan." in model.chat_requests()[-1]["messages"][0]["content"]
    (plan,) = agent.client.of_kind(session_id, "plan")
    assert [(e.content, e.status) for e in plan.entries] == [
        ("Read `notes.txt`", "pending"),
        ("Change the secret to 43", "pending"),
    ]
    agent.run(agent.conn.set_session_mode(session_id=session_id, mode_id="ask"))
    prompt(agent, session_id, "what is the secret?")  # an answer, and not in plan mode: no plan
    assert len(agent.client.of_kind(session_id, "plan")) == 1


def test_bad_requests_are_clear_errors_and_the_process_goes_on(agent, ws):
    with pytest.raises(RequestError, match="No open session 'nope'"):
        prompt(agent, "nope", "hi")
    with pytest.raises(RequestError, match="No saved session named 'missing'"):
        agent.run(agent.conn.load_session(cwd=str(ws), session_id="missing", mcp_servers=[]))
    with pytest.raises(RequestError, match="is not a directory"):
        agent.run(agent.conn.new_session(cwd=str(ws / "gone"), mcp_servers=[]))
    assert new_session(agent, ws) and agent.process.returncode is None
    assert "Traceback" not in Path(agent.log.name).read_text()


def test_mcp_servers_the_editor_passes_are_the_sessions_and_their_calls_ask(agent, model, ws):
    from acp.schema import McpServerStdio

    from tests.support.mcp_servers import DEMO_SERVER

    model.add(call("mcp", {"name": "editor-demo.add", "arguments": {"a": 2, "b": 3}}), text("It is 5."))
    server = McpServerStdio(name="editor demo", command=sys.executable, args=[DEMO_SERVER], env=[])
    session_id = agent.run(agent.conn.new_session(cwd=str(ws), mcp_servers=[server])).session_id
    prompt(agent, session_id, "add 2 and 3")
    assert agent.client.questions[-1][1].title == "mcp name=editor-demo.add"
    assert model.chat_requests()[-1]["messages"][-1]["content"] == "mcp editor-demo.add:\n5"
    assert "- editor-demo: tools not listed yet" in model.chat_requests()[0]["messages"][0]["content"]


@pytest.mark.parametrize(
    "how, code", [("closes stdin", 0), (signal.SIGTERM, 143), pytest.param(signal.SIGHUP, 129, marks=NEEDS_SIGHUP)]
)
def test_an_editor_that_goes_away_mid_turn_stops_the_turn_and_the_process_ends_by_itself(
    how, code, model, ws, tmp_path
):
    home = tmp_path / "home"
    sleeper = {"command": "echo $$ > sleeper.pid && exec sleep 120", "unsandboxed": True}  # its pid as the system's
    model.add(call("run_command", sleeper), text("never read"))
    editor = AcpHarness(agent_env(model, home), tmp_path, tmp_path / "stderr.log", shutdown_timeout=CANCEL_WITHIN_S)
    session_id = editor.run(editor.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
    editor.run(editor.conn.set_session_mode(session_id=session_id, mode_id="auto"))
    editor.start(editor.conn.prompt(session_id=session_id, prompt=[text_block("wait a while")]))
    wait_for(lambda: (ws / "sleeper.pid").exists() and (ws / "sleeper.pid").read_text().strip())
    started = time.monotonic()
    if how != "closes stdin":
        editor.process.send_signal(how)
    assert editor.close() == code and time.monotonic() - started < CANCEL_WITHIN_S / 2  # not the SDK's terminate
    sleeper = int((ws / "sleeper.pid").read_text())
    wait_for(lambda: not alive(sleeper), timeout=HANG_GUARD_S)  # the command's process group ended with the turn
    with Session(home, session_id, workspace=ws) as saved:  # every open call answered, the session saved
        results = [m["content"] for m in saved.state.messages if m["role"] == "tool"]
        assert len(results) == 1 and "interrupted by the user after" in results[0]
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()


def test_a_cache_miss_reaches_the_editor_as_one_thought_line(agent, model, ws):
    def share(cached: int) -> dict:
        return {"prompt_tokens": 2_000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": cached}}

    model.add(text("a", usage=share(0)), text("b", usage=share(1_900)), text("c", usage=share(100)))
    session = new_session(agent, ws)
    for words in ("one", "two", "three"):
        prompt(agent, session, words)
    thoughts = [u.content.text for u in agent.client.of_kind(session, "agent_thought_chunk")]
    assert thoughts == [
        "[info] cache miss: 5% cached (was 95%): the prefix was unchanged; the provider did not reuse its cache\n"
    ]
