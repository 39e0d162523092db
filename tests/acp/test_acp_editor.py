"""`nanohermes acp` with an editor that lends its files (fs/read_text_file, fs/write_text_file): one
real agent process for the module, driven by the SDK's client over real pipes, every message it
sends checked against the protocol's JSON schema (tests/support/acp_schema.py) as it arrives."""

import os
import sys
import time
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp.schema import McpServerStdio

from tests.acp.test_acp import agent_env, new_session, prompt, wait_for
from tests.support.acp_client import AcpHarness
from tests.support.mcp_servers import DEMO_SERVER
from tests.support.processes import alive
from tests.support.scripted_server import Reply, ScriptedServer, call, serving, text
from tests.support.timing import HANG_GUARD_S

pytestmark = pytest.mark.subprocess

RESOURCE_NOT_FOUND = -32002  # the protocol's ErrorCode for a session that is not there


@pytest.fixture(scope="module")
def model():
    server = serving(ScriptedServer(), ["test-model", "other-model"])
    yield server
    server.close()


@pytest.fixture(scope="module")
def editor(model, tmp_path_factory):
    home, cwd = tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("cwd")
    log = tmp_path_factory.mktemp("log") / "stderr.log"
    harness = AcpHarness(agent_env(model, home), cwd, log, files=True, terminal=True)
    yield harness
    assert harness.close() == 0
    assert harness.check.deviations == []  # every message of every test in this module


@pytest.fixture(autouse=True)
def fresh(model, editor):
    model.script.clear()
    model.requests.clear()
    editor.client.reset()


def descendants(pid: int) -> set[int]:
    """The processes `pid` started, and theirs (from /proc)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def test_a_full_session_replayed_through_the_schema_has_no_deviation(editor, model, ws):
    model.add(
        call("read_file", {"path": "notes.txt"}, content="Looking."),
        call("edit_file", {"path": "notes.txt", "old_text": "42", "new_text": "43"}),
        text("Done: 43."),
    )
    editor.client.buffers[str(ws / "notes.txt")] = "the secret is 42, unsaved\n"
    session_id = new_session(editor, ws)
    editor.run(editor.conn.set_session_mode(session_id=session_id, mode_id="ask"))
    assert prompt(editor, session_id, "bump the secret").stop_reason == "end_turn"
    assert prompt(editor, session_id, "/diff").stop_reason == "end_turn"
    editor.run(editor.conn.list_sessions(cwd=str(ws)))
    editor.run(editor.conn.load_session(cwd=str(ws), session_id=session_id, mcp_servers=[]))
    with pytest.raises(RequestError):
        prompt(editor, "nope", "hi")
    editor.run(editor.conn.close_session(session_id=session_id))
    methods = {m.get("method") for m in editor.check.sent_by_agent}
    kinds = {
        m["params"]["update"]["sessionUpdate"]
        for m in editor.check.sent_by_agent
        if "update" in (m.get("params") or {})
    }
    assert {"session/update", "session/request_permission", "fs/read_text_file", "fs/write_text_file"} <= methods
    assert {"available_commands_update", "tool_call", "tool_call_update", "agent_message_chunk"} <= kinds
    assert any("error" in m for m in editor.check.sent_by_agent) and editor.check.deviations == []


def test_the_editors_unsaved_buffer_is_what_the_tools_read_and_a_write_goes_through_the_editor(editor, model, ws):
    notes = str(ws / "notes.txt")
    editor.client.buffers[notes] = "the secret is 42, unsaved\n"
    model.add(
        call("read_file", {"path": "notes.txt"}),
        call("edit_file", {"path": "notes.txt", "old_text": "unsaved", "new_text": "saved"}),
        call("read_file", {"path": "../outside.txt"}),
        text("Saved."),
    )
    (ws.parent / "outside.txt").write_text("outside\n")
    session_id = new_session(editor, ws)
    prompt(editor, session_id, "save it")
    results = [m["content"] for m in model.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert "the secret is 42, unsaved" in results[0]
    ((_, question, _),) = [q for q in editor.client.questions if q[0] == session_id]
    assert (question.content[0].old_text, question.content[0].new_text) == (
        "the secret is 42, unsaved\n",
        "the secret is 42, saved\n",
    )
    assert (ws / "notes.txt").read_text() == "the secret is 42, saved\n"  # the editor saved it
    assert editor.client.fs_calls.count(("write", notes)) == 1
    assert all(path == notes for _, path in editor.client.fs_calls)  # outside the workspace: never the editor's
    assert results[2].startswith("error:")  # …and refused by the tool as before


def test_an_unknown_session_is_the_protocols_resource_not_found(editor, ws):
    for request in (
        editor.conn.prompt(session_id="nope", prompt=[text_block("hi")]),
        editor.conn.set_session_mode(session_id="nope", mode_id="ask"),
        editor.conn.close_session(session_id="nope"),
        editor.conn.load_session(cwd=str(ws), session_id="never-saved", mcp_servers=[]),
    ):
        with pytest.raises(RequestError) as failure:
            editor.run(request)
        assert failure.value.code == RESOURCE_NOT_FOUND


def test_slash_commands_are_announced_and_run_and_other_slashes_go_to_the_model(editor, model, ws):
    model.add(call("write_file", {"path": "new.txt", "content": "fresh\n"}), text("Made it."))
    session_id = new_session(editor, ws)
    wait_for(lambda: editor.client.of_kind(session_id, "available_commands_update"))  # sent after the response
    (announced,) = editor.client.of_kind(session_id, "available_commands_update")
    names = [c.name for c in announced.available_commands]
    assert {"compact", "context", "diff", "undo", "memory"} <= set(names) and "exit" not in names
    prompt(editor, session_id, "make a file")
    before = len(editor.client.text(session_id))
    assert prompt(editor, session_id, "/diff").stop_reason == "end_turn"
    assert "+fresh" in editor.client.text(session_id)[before:]
    assert prompt(editor, session_id, "/undo").stop_reason == "end_turn" and not (ws / "new.txt").exists()
    prompt(editor, session_id, "/memory add prefer tabs")
    prompt(editor, session_id, "/context")
    assert "prefer tabs" in editor.client.text(session_id) and "The next request holds" in editor.client.text(
        session_id
    )
    assert len(model.chat_requests()) == 2  # no command reached the model
    model.add(text("It is a path."))
    prompt(editor, session_id, "/usr/bin/env is what?")
    *_, note, ack, sent = model.chat_requests()[-1]["messages"]
    assert sent == {"role": "user", "content": "/usr/bin/env is what?"}  # the user's words alone
    assert note["role"] == "user" and note["content"].startswith("[The user ran /undo: new.txt")  # a note of its own
    assert ack["role"] == "assistant"


def test_the_model_and_the_mode_are_config_options_the_editor_can_set(editor, model, ws):
    response = editor.run(editor.conn.new_session(cwd=str(ws), mcp_servers=[]))
    options = {o.root.id if hasattr(o, "root") else o.id: o for o in response.config_options}
    model_option = options["model"].root if hasattr(options["model"], "root") else options["model"]
    assert model_option.category == "model" and model_option.current_value == "test-model"
    assert [o.value for o in model_option.options] == ["test-model", "other-model"]
    changed = editor.run(
        editor.conn.set_config_option(config_id="model", session_id=response.session_id, value="other-model")
    )
    assert "other-model" in str(changed.config_options)
    editor.run(editor.conn.set_config_option(config_id="mode", session_id=response.session_id, value="plan"))
    model.add(text("Planned."))
    prompt(editor, response.session_id, "plan it")
    sent = model.chat_requests()[-1]
    assert sent["model"] == "other-model" and "Mode: plan." in sent["messages"][0]["content"]
    with pytest.raises(RequestError):
        editor.run(editor.conn.set_config_option(config_id="mode", session_id=response.session_id, value="wild"))


def test_close_releases_the_sessions_mcp_server_and_the_session_loads_again(editor, model, ws):
    model.add(call("mcp", {"name": "demo.add", "arguments": {"a": 2, "b": 3}}), text("5"))
    server = McpServerStdio(name="demo", command=sys.executable, args=[DEMO_SERVER], env=[])
    session_id = editor.run(editor.conn.new_session(cwd=str(ws), mcp_servers=[server])).session_id
    prompt(editor, session_id, "add 2 and 3")
    (started,) = [
        p for p in descendants(editor.process.pid) if DEMO_SERVER.encode() in Path(f"/proc/{p}/cmdline").read_bytes()
    ]
    editor.run(editor.conn.close_session(session_id=session_id))
    wait_for(lambda: not alive(started))
    with pytest.raises(RequestError) as failure:
        prompt(editor, session_id, "still there?")
    assert failure.value.code == RESOURCE_NOT_FOUND
    editor.run(editor.conn.load_session(cwd=str(ws), session_id=session_id, mcp_servers=[]))
    model.add(text("Back."))
    assert prompt(editor, session_id, "back?").stop_reason == "end_turn"


def test_a_retried_reply_is_marked_only_when_the_editor_had_seen_something_else(editor, model, ws):
    model.add(
        Reply(content="\n\n   Hello there, this is long", chunk_size=3, drop_after=1),  # whitespace only, then dropped
        text("A different answer."),
        Reply(content="Hello there, this is long", chunk_size=6, drop_after=2),  # words shown, then dropped
        text("Something else."),
    )
    session_id = new_session(editor, ws)
    prompt(editor, session_id, "one")
    assert "restarted" not in editor.client.text(session_id)
    prompt(editor, session_id, "two")
    assert "[the reply restarted" in editor.client.text(session_id)


def test_an_unconfined_command_runs_in_the_editors_terminal_and_a_sandboxed_one_in_the_sandbox(editor, model, ws):
    model.add(
        call("run_command", {"command": "echo outside > out.txt; echo said", "unsandboxed": True, "reason": "x"}),
        call("run_command", {"command": "echo inside"}),
        text("Both ran."),
    )
    session_id = new_session(editor, ws)
    prompt(editor, session_id, "run both")
    assert editor.client.ran == ["echo outside > out.txt; echo said"]  # asked first, then the editor ran it
    assert len([q for q in editor.client.questions if q[0] == session_id]) == 1
    results = [m["content"] for m in model.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert results[0].startswith("$ echo outside") and "exit code 0" in results[0] and "said" in results[0]
    assert "inside" in results[1] and (ws / "out.txt").read_text() == "outside\n"
    shown = [
        c
        for u in editor.client.of_kind(session_id, "tool_call_update")
        for c in u.content or ()
        if c.type == "terminal"
    ]
    assert len(shown) == 1  # the running card showed the editor's terminal


def test_a_cancel_kills_the_editors_terminal(editor, model, ws):
    model.add(call("run_command", {"command": "sleep 120", "unsandboxed": True, "reason": "x"}), text("Stopped."))
    session_id = new_session(editor, ws)
    pending = editor.start(editor.conn.prompt(session_id=session_id, prompt=[text_block("wait")]))
    wait_for(lambda: editor.client.ran)
    started = time.monotonic()
    editor.run(editor.conn.cancel(session_id=session_id))
    assert (
        pending.result(HANG_GUARD_S).stop_reason == "cancelled" and time.monotonic() - started < HANG_GUARD_S
    )  # the command: 120 s
    wait_for(lambda: not editor.client.terminals)  # killed and released


def test_a_cancel_before_the_editor_says_which_terminal_still_kills_it(editor, model, ws):
    editor.client.terminal_answer_s = 1.0  # the command runs at once, its terminal's id comes later
    model.add(call("run_command", {"command": "sleep 120", "unsandboxed": True, "reason": "x"}), text("Stopped."))
    session_id = new_session(editor, ws)
    pending = editor.start(editor.conn.prompt(session_id=session_id, prompt=[text_block("wait")]))
    wait_for(lambda: editor.client.ran)
    editor.run(editor.conn.cancel(session_id=session_id))
    assert pending.result(HANG_GUARD_S).stop_reason == "cancelled"
    wait_for(lambda: not editor.client.terminals)  # killed and released once its id came


def test_past_eight_open_sessions_the_least_recently_used_idle_one_is_released(editor, ws):
    opened = [new_session(editor, ws) for _ in range(9)]  # the relay's MAX_OPEN_SESSIONS is 8
    with pytest.raises(RequestError) as failure:
        editor.run(editor.conn.set_session_mode(session_id=opened[0], mode_id="ask"))
    assert failure.value.code == RESOURCE_NOT_FOUND
    for session_id in opened[1:]:
        editor.run(editor.conn.set_session_mode(session_id=session_id, mode_id="ask"))  # still open


def test_closing_a_session_mid_turn_stops_its_turn_first(editor, model, ws):
    model.add(call("run_command", {"command": "sleep 120"}), text("never read"))
    session_id = new_session(editor, ws)
    pending = editor.start(editor.conn.prompt(session_id=session_id, prompt=[text_block("wait")]))
    wait_for(lambda: editor.client.of_kind(session_id, "tool_call"))
    started = time.monotonic()
    editor.run(editor.conn.close_session(session_id=session_id))
    assert (
        pending.result(HANG_GUARD_S).stop_reason == "cancelled" and time.monotonic() - started < HANG_GUARD_S
    )  # the command: 120 s
    assert editor.client.of_kind(session_id, "tool_call_update")[-1].status == "failed"


def test_a_custom_command_file_is_announced_and_expands_into_the_prompt(editor, model, ws):
    commands = ws / ".nanohermes" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: review a file\nargument-hint: FILE\n---\nReview $ARGUMENTS, briefly.\n"
    )
    (commands / "diff.md").write_text("A file never replaces a built-in.\n")
    session_id = new_session(editor, ws)
    wait_for(lambda: editor.client.of_kind(session_id, "available_commands_update"))
    (announced,) = editor.client.of_kind(session_id, "available_commands_update")
    review = next(c for c in announced.available_commands if c.name == "review")
    assert review.description == "review a file" and review.input.root.hint == "FILE"
    assert [c.name for c in announced.available_commands].count("diff") == 1
    model.add(text("Reviewed."))
    prompt(editor, session_id, "/review notes.txt")
    assert model.chat_requests()[-1]["messages"][-1]["content"].startswith("Review notes.txt, briefly.")


def test_an_mcp_servers_yes_or_no_question_is_asked_on_the_calls_card_and_a_form_declined_saying_why(editor, model, ws):
    model.add(
        call("mcp", {"name": "rich.deploy"}),
        call("mcp", {"name": "rich.book"}),
        text("Done."),
    )
    server = McpServerStdio(name="rich", command=sys.executable, args=[DEMO_SERVER, "--rich"], env=[])
    session_id = editor.run(editor.conn.new_session(cwd=str(ws), mcp_servers=[server])).session_id
    editor.run(editor.conn.set_session_mode(session_id=session_id, mode_id="auto"))  # the calls ask nothing
    editor.client.answer = "pick0"  # the first option: Yes
    prompt(editor, session_id, "deploy, then book")
    results = [m["content"] for m in model.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert "accept: {'go': True}" in results[0]  # the editor's button became the form's answer
    assert "decline: None" in results[1]  # three fields to type, and this editor declared no forms: declined
    assert "the editor offers no forms (ACP's elicitation/create, unstable, was not in its capabilities)" in results[1]
    warned = [u.content.text for u in editor.client.of_kind(session_id, "agent_thought_chunk")]
    assert any(w.startswith("[warning] rich asked: Which meeting should I book? — the editor offers") for w in warned)
    asked = [q for q in editor.client.questions if "asks: Deploy to staging now?" in str(q)]
    assert len(asked) == 1 and "Yes" in str(asked[0]) and "Decline" in str(asked[0])
