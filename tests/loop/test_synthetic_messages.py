"""What the loop writes for the model in the user role is tagged, never sent with its tag, and
never read back as the user's words: by the resume recap, an editor's history or /context."""

from __future__ import annotations

import json

from nanohermes.acp.updates import history
from nanohermes.loop.coach.plain import ANSWER_NOW, CALL_AS_TEXT_RETRY
from nanohermes.slash.conversation import context_parts
from nanohermes.storage.session import Session
from nanohermes.synthetic import SYNTHETIC
from nanohermes.ui.recap import last_exchange, recap_lines
from tests.support.agents import make_agent
from tests.support.scripted_server import call, text

AS_TEXT = 'I will run it: {"name": "echo", "arguments": {"text": "hi"}}'  # prose around it: not run, a nudge


def _session_events(agent) -> list[dict]:
    return [json.loads(line) for line in agent.session.path.read_text().splitlines()]


def test_a_resumed_history_ending_in_a_nudge_recaps_the_users_request(server, workspace, isolated_home):
    server.add(text(AS_TEXT), text(AS_TEXT), text("Done: it said hi."))
    agent = make_agent(server, workspace, session_name="nudged")
    agent.run_turn("please echo hi for me")
    agent.session.close()
    with Session(isolated_home, "nudged") as resumed:
        messages = resumed.state.messages
        assert messages[-2]["content"] == CALL_AS_TEXT_RETRY.format(name="echo")  # the loop's, last before the answer
        assert last_exchange(messages) == ("please echo hi for me", "Done: it said hi.")
        assert "  last request: please echo hi for me" in recap_lines(messages)


def test_the_recap_shows_the_users_words_not_the_files_that_travelled_with_them(server, workspace, isolated_home):
    (workspace / "notes.txt").write_text("remember the milk\n")
    server.add(text("It says: remember the milk."))
    agent = make_agent(server, workspace, session_name="attached")
    agent.run_turn("what does notes.txt say?")
    agent.session.close()
    with Session(isolated_home, "attached") as resumed:
        messages = resumed.state.messages
        assert "remember the milk" in messages[1]["content"]  # the model read the file with the request
        assert last_exchange(messages)[0] == "what does notes.txt say?"


def test_the_tag_is_kept_beside_the_message_and_never_sent(server, workspace):
    server.add(*[call("echo", {"text": "same"}) for _ in range(3)], text("It echoes."))  # the third is refused
    agent = make_agent(server, workspace)
    agent.run_turn("what does echo do?")
    sent = [m for r in server.chat_requests() for m in r["messages"]]
    assert {"role": "user", "content": ANSWER_NOW} in sent  # the model reads the nudge as a user message
    assert not any(SYNTHETIC in m for m in sent)
    events = [e for e in _session_events(agent) if e["type"] == "message"]
    nudge = next(e for e in events if e["message"]["content"] == ANSWER_NOW)
    assert nudge["synthetic"] == "answer_now" and SYNTHETIC not in nudge["message"]


def test_an_editor_replaying_the_history_sees_no_nudge_as_the_users(server, workspace, isolated_home):
    server.add(text(AS_TEXT), text("Done."))
    agent = make_agent(server, workspace, session_name="replayed")
    agent.run_turn("echo hi")
    agent.session.close()
    with Session(isolated_home, "replayed") as resumed:
        said = [
            u.content.text
            for u in history(resumed.state.messages, workspace)
            if u.session_update == "user_message_chunk"
        ]
    assert said == ["echo hi"]


def test_context_counts_nudges_as_loop_notes_not_user_text(server, workspace):
    server.add(text(AS_TEXT), text("Done."))
    agent = make_agent(server, workspace)
    agent.run_turn("echo hi")
    parts = context_parts({}, agent.messages, agent.tool_schemas())
    nudge = len(json.dumps({"role": "user", "content": CALL_AS_TEXT_RETRY.format(name="echo")}, separators=(",", ":")))
    assert parts["loop notes"] == nudge
    assert parts["user"] == len(json.dumps({"role": "user", "content": "echo hi"}, separators=(",", ":")))
