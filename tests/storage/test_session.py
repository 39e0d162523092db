import json
import stat

import pytest

from nanohermes.errors import SessionError
from nanohermes.storage.catalog import list_sessions
from nanohermes.storage.session import Session
from tests.support.agents import make_agent
from tests.support.scripted_server import call, text


def _mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_session_files_are_private(isolated_home):
    with Session(isolated_home, "private") as s:
        s.record_message({"role": "user", "content": "hi"})
    assert _mode(isolated_home / "sessions") == 0o700
    assert _mode(isolated_home / "sessions" / "private.jsonl") == 0o600


def test_resume_restores_messages_and_rebuilds_the_system_message(server, workspace):
    server.add(call("echo", {"text": "x"}), text("first answer"), text("second answer"))
    agent = make_agent(server, workspace, session_name="work")
    agent.run_turn("first question")
    agent.session.close()
    resumed = make_agent(server, workspace, session_name="work")
    assert resumed.messages[0] == {"role": "system", "content": "SYSTEM"}
    assert [m["role"] for m in resumed.messages] == ["system", "user", "assistant", "tool", "assistant"]
    resumed.run_turn("second question")
    sent = server.chat_requests()[-1]["messages"]
    assert sent[1]["content"] == "first question" and sent[-1]["content"] == "second question"


def test_a_second_process_on_the_same_session_gets_a_clear_error(isolated_home):
    with Session(isolated_home, "busy"), pytest.raises(SessionError, match="in use by another nanohermes process"):
        Session(isolated_home, "busy")
    Session(isolated_home, "busy").close()  # released afterwards


def test_truncated_last_line_is_tolerated_and_dropped(isolated_home):
    with Session(isolated_home, "torn") as s:
        s.record_message({"role": "user", "content": "kept"})
    path = isolated_home / "sessions" / "torn.jsonl"
    with open(path, "a") as f:
        f.write('{"type":"message","message":{"role":"assis')
    with Session(isolated_home, "torn") as s:
        assert s.state.messages == [{"role": "user", "content": "kept"}]
        s.record_message({"role": "assistant", "content": "after"})
    with Session(isolated_home, "torn") as s:
        assert [m["content"] for m in s.state.messages] == ["kept", "after"]


def test_corrupt_file_is_never_overwritten(isolated_home):
    (isolated_home / "sessions").mkdir(parents=True)
    path = isolated_home / "sessions" / "bad.jsonl"
    original = b'{"type":"meta"}\nnot json at all\n{"type":"message","message":{"role":"user","content":"x"}}\n'
    path.write_bytes(original)
    with pytest.raises(SessionError, match="corrupt at line 2; it was left untouched"):
        Session(isolated_home, "bad")
    assert path.read_bytes() == original
    Session(isolated_home, "other").close()  # the lock of the failed one was released


def test_full_tool_outputs_are_stored_and_restored_for_recall(server, workspace):
    server.add(call("big", {"size": 30_000}), text("ok"))
    agent = make_agent(server, workspace, session_name="big")
    agent.run_turn("go")
    call_id = agent.messages[2]["tool_calls"][0]["id"]
    agent.session.close()
    resumed = make_agent(server, workspace, session_name="big")
    assert resumed.ctx.outputs.get(call_id) == "x" * 30_000


def test_the_api_key_is_never_written(server, workspace, isolated_home):
    server.add(text("ok"))
    agent = make_agent(server, workspace, session_name="k", api_key="sk-secret-123")
    agent.run_turn("hi")
    agent.session.close()
    for path in isolated_home.rglob("*"):
        if path.is_file():
            assert b"sk-secret-123" not in path.read_bytes()


def test_bad_session_names_are_refused(isolated_home):
    with pytest.raises(SessionError, match="not allowed"):
        Session(isolated_home, "../escape")


def test_list_sessions_counts_messages(isolated_home):
    with Session(isolated_home, "a") as s:
        s.record_message({"role": "user", "content": "1"})
        s.record_message({"role": "assistant", "content": "2"})
    [info] = list_sessions(isolated_home)
    assert (info.name, info.messages) == ("a", 2) and info.size > 0


def test_reset_starts_the_working_set_over(server, workspace):
    server.add(text("a"), text("b"))
    agent = make_agent(server, workspace, session_name="r")
    agent.run_turn("one")
    agent.reset()
    agent.run_turn("two")
    agent.session.close()
    resumed = make_agent(server, workspace, session_name="r")
    assert [m["content"] for m in resumed.messages[1:]] == ["two", "b"]
    lines = (resumed.session.path).read_text().splitlines()
    assert sum(json.loads(line)["type"] == "message" for line in lines) == 4  # storage keeps everything


def test_a_session_killed_mid_tool_resumes_with_every_call_answered(server, workspace, isolated_home):
    from nanohermes.context import pairing_problems

    with Session(isolated_home, "killed") as s:
        s.record_message({"role": "user", "content": "run it"})
        s.record_message(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "echo", "arguments": "{}"}}],
            }
        )
    server.add(text("resumed fine"))
    agent = make_agent(server, workspace, session_name="killed")
    assert pairing_problems(agent.messages) == []
    assert agent.messages[-1]["content"].startswith("[no result")
    assert agent.run_turn("continue").final_text == "resumed fine"


def test_a_torn_last_line_that_splits_a_multibyte_character_is_tolerated(isolated_home):
    with Session(isolated_home, "cjk") as s:
        s.record_message({"role": "user", "content": "你好"})
        s.record_message({"role": "assistant", "content": "这是一个很长的中文回答"})
    path = isolated_home / "sessions" / "cjk.jsonl"
    crashed = path.read_bytes().rsplit(b'{"type":"stats"', 1)[0]  # a crash leaves no closing stats event
    path.write_bytes(crashed[:-6])
    with Session(isolated_home, "cjk") as s:
        assert [m["content"] for m in s.state.messages] == ["你好"]


def test_a_complete_last_event_without_its_newline_is_kept_and_terminated(isolated_home):
    with Session(isolated_home, "nl") as s:
        s.record_message({"role": "user", "content": "one"})
    path = isolated_home / "sessions" / "nl.jsonl"
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    with Session(isolated_home, "nl") as s:
        s.record_message({"role": "user", "content": "two"})
    with Session(isolated_home, "nl") as s:
        assert [m["content"] for m in s.state.messages] == ["one", "two"]


@pytest.mark.parametrize("line", ['{"type":"message"}', '{"type":"message","message":"hi"}', "[1,2]", '{"no":"type"}'])
def test_well_formed_json_of_the_wrong_shape_is_a_clear_corruption_error(isolated_home, line):
    (isolated_home / "sessions").mkdir(parents=True)
    path = isolated_home / "sessions" / "shape.jsonl"
    original = ('{"type":"meta"}\n' + line + '\n{"type":"reset"}\n').encode()
    path.write_bytes(original)
    with pytest.raises(SessionError, match="corrupt at line 2"):
        Session(isolated_home, "shape")
    assert path.read_bytes() == original


def test_generated_names_never_collide(isolated_home, monkeypatch):
    import nanohermes.storage.session as session_module

    names = iter(["same", "same", "other"])
    monkeypatch.setattr(session_module, "generate_name", lambda: next(names))
    first, second = Session(isolated_home), Session(isolated_home)
    assert (first.name, second.name) == ("same", "other")
    first.close(), second.close()
