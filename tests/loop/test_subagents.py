"""Helper agents (the `task` tool) through the real runtime and the scripted server: the parent
gets only the answer, the helper runs with the parent's tools minus `task`, its mode, its own
step limit and session; failures, step limits and Ctrl-C answer the parent's call."""

import json

import pytest

from nanohermes import events as ev
from nanohermes.configure import load_config
from nanohermes.context import pairing_problems
from nanohermes.loop.subagents import HELPER_BRIEF
from nanohermes.runtime import build_runtime
from nanohermes.storage.catalog import latest_session, list_sessions
from tests.support.scripted_server import Error, call, is_summary_request, text


def is_helper(body: dict) -> bool:
    return any(HELPER_BRIEF in (m.get("content") or "") for m in body["messages"] if m["role"] == "user")


def scripted(server, parent: list, helper: list):
    """Replies by who asks: the parent's and the helper's requests each take the next of theirs."""
    queues = {True: list(helper), False: list(parent)}

    def handler(body):
        if is_summary_request(body):
            return text("Goal: summarised.")
        return queues[is_helper(body)].pop(0)

    server.handler = handler


def runtime_for(server, workspace, monkeypatch, events=None, name="parent", **flags):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = load_config(base_url=server.url, workspace=workspace, **{"mode": "auto", **flags})
    return build_runtime(config, name, (events if events is not None else []).append, approve=None)


@pytest.fixture
def files(workspace):
    for i in range(3):
        (workspace / f"f{i}.txt").write_text(f"file {i} line\n" * 200)
    return workspace


def parent_requests(server):
    return [r for r in server.chat_requests() if not is_helper(r) and not is_summary_request(r)]


def helper_requests(server):
    return [r for r in server.chat_requests() if is_helper(r)]


def test_the_parent_gets_only_the_helpers_answer_never_its_tool_outputs(server, files, monkeypatch, isolated_home):
    scripted(
        server,
        parent=[
            call("task", {"description": "count lines", "prompt": "How many lines do f0-f2 have?"}),
            text("600 lines in all"),
        ],
        helper=[call("read_file", {"path": f"f{i}.txt"}) for i in range(3)] + [text("They have 200 lines each.")],
    )
    runtime = runtime_for(server, files, monkeypatch)
    assert runtime.agent.run_turn("count the lines").final_text == "600 lines in all"
    runtime.close()
    result = parent_requests(server)[-1]["messages"][-1]
    assert result["role"] == "tool" and result["content"] == (
        "[helper 'count lines' answered after 4 steps; its transcript: session parent.task1]\nThey have 200 lines each."
    )
    assert not any("file 0 line" in json.dumps(r["messages"]) for r in parent_requests(server))
    child = (isolated_home / "sessions" / "parent.task1.jsonl").read_text().splitlines()
    assert json.loads(child[0])["parent"] == "parent" and "file 0 line" in "".join(child)


def test_the_helper_has_the_parents_system_message_and_tools_minus_task(server, files, monkeypatch):
    scripted(server, parent=[call("task", {"description": "d", "prompt": "p"}), text("done")], helper=[text("answer")])
    runtime = runtime_for(server, files, monkeypatch)
    runtime.agent.run_turn("go")
    runtime.close()
    parent, helper = parent_requests(server)[0], helper_requests(server)[0]
    assert helper["messages"][0] == parent["messages"][0]
    names = [t["function"]["name"] for t in parent["tools"]]
    assert names[-1] == "task" and helper["tools"] == parent["tools"][:-1]  # a prefix: cached with the parent's
    assert helper["messages"][1] == {"role": "user", "content": f"p\n\n{HELPER_BRIEF}"}


def test_a_helper_in_plan_mode_is_offered_only_read_only_tools_and_commands(server, files, monkeypatch):
    scripted(
        server, parent=[call("task", {"description": "d", "prompt": "look"}), text("planned")], helper=[text("seen")]
    )
    runtime = runtime_for(server, files, monkeypatch, mode="plan")
    runtime.agent.run_turn("plan it")
    runtime.close()
    names = {t["function"]["name"] for t in helper_requests(server)[0]["tools"]}
    assert "read_file" in names and not names & {"write_file", "edit_file", "task"}
    assert "run_command" in names  # run in the read-only sandbox


def test_a_helper_that_fails_gives_the_parent_an_error_and_the_parent_goes_on(server, files, monkeypatch):
    bad_request = Error(
        400, {"error": {"message": "model is overloaded with nonsense", "type": "invalid_request_error"}}
    )
    scripted(
        server,
        parent=[call("task", {"description": "search", "prompt": "find it"}), text("I will look myself")],
        helper=[bad_request],
    )
    runtime = runtime_for(server, files, monkeypatch)
    result = runtime.agent.run_turn("find it")
    runtime.close()
    assert result.final_text == "I will look myself"
    content = parent_requests(server)[-1]["messages"][-1]["content"]
    assert content.startswith("error: helper 'search' failed: ") and content.endswith(
        "(its transcript: session parent.task1)"
    )


def test_a_helper_at_its_step_limit_stops_and_the_parent_reads_what_it_said_last(server, files, monkeypatch):
    scripted(
        server,
        parent=[call("task", {"description": "dig", "prompt": "dig deep"}), text("too deep")],
        helper=[call("glob", {"pattern": f"*{i}.txt"}, content=f"still digging {i}") for i in range(5)],
    )
    runtime = runtime_for(server, files, monkeypatch, task_max_steps=3)
    runtime.agent.run_turn("dig")
    runtime.close()
    assert (
        len(helper_requests(server)) == 4
    )  # three steps, then its last request, tools off (answered by the script's summary)
    content = parent_requests(server)[-1]["messages"][-1]["content"]
    assert content == (
        "error: helper 'dig' stopped at its step limit (3 steps) (its transcript: session parent.task1). "
        "Its partial answer: [partial answer: the run stopped early] Goal: summarised. "
        "Check what it left open, give it a narrower task, or do it yourself."
    )


def test_ctrl_c_in_a_helper_answers_the_parents_call_and_stops_the_turn(server, files, monkeypatch):
    events = []

    def press_ctrl_c_during_the_helpers_tool(event):
        events.append(event)
        if isinstance(event, ev.SubagentEvent) and isinstance(event.event, ev.ToolStarted):
            raise KeyboardInterrupt

    scripted(
        server,
        parent=[call("task", {"description": "slow", "prompt": "read"}), text("after")],
        helper=[call("read_file", {"path": "f0.txt"}), text("never")],
    )
    runtime = runtime_for(server, files, monkeypatch)
    runtime.agent.emit = press_ctrl_c_during_the_helpers_tool
    result = runtime.agent.run_turn("go")
    assert result.stop_code == ev.StopCode.INTERRUPTED and len(parent_requests(server)) == 1
    answer = runtime.agent.messages[-1]
    assert answer["role"] == "tool" and answer["content"] == (
        "[interrupted by user: helper 'slow' was stopped after 1 step; its transcript: session parent.task1]"
    )
    assert pairing_problems(runtime.agent.messages) == []
    runtime.agent.emit = events.append
    assert runtime.agent.run_turn("go on").final_text == "after"  # the history is valid
    runtime.close()


def test_each_helper_gets_its_own_session_and_continue_never_picks_one(server, files, monkeypatch, isolated_home):
    task = call("task", {"description": "d", "prompt": "p"})
    scripted(server, parent=[task, text("one"), task, text("two")], helper=[text("a"), text("b")])
    runtime = runtime_for(server, files, monkeypatch)
    runtime.agent.run_turn("first")
    runtime.agent.run_turn("second")
    runtime.close()
    infos = {i.name: i for i in list_sessions(isolated_home)}
    assert set(infos) == {"parent", "parent.task1", "parent.task2"} and infos["parent.task2"].parent == "parent"
    assert latest_session(isolated_home, files).name == "parent"


def test_the_helpers_tool_calls_are_shown_nested_under_the_parents_call(server, files, monkeypatch):
    import io

    from nanohermes.ui.plain import PlainRenderer
    from nanohermes.ui.script_output import event_dict

    scripted(
        server,
        parent=[call("task", {"description": "look", "prompt": "p"}), text("done")],
        helper=[call("read_file", {"path": "f1.txt"}), text("seen")],
    )
    err, events = io.StringIO(), []
    renderer = PlainRenderer(err)
    runtime = runtime_for(server, files, monkeypatch, events=events)
    runtime.agent.emit = lambda event: (events.append(event), renderer(event))
    runtime.agent.run_turn("go")
    runtime.close()
    lines = err.getvalue().splitlines()
    start = lines.index("→ task description=look")
    assert lines[start + 1] == "  ┆ → read_file path=f1.txt"
    assert lines[start + 2] == "  ┆   ✓ read_file f1.txt lines 1–200 of 200"
    assert lines[start + 3].startswith("  ┆ helper 'look': tokens this turn:")
    assert lines[start + 4].startswith("  ✓ [helper 'look' answered")
    nested = next(e for e in events if isinstance(e, ev.SubagentEvent) and isinstance(e.event, ev.ToolStarted))
    assert event_dict(nested) == {
        "type": "subagent_event",
        "label": "look",
        "event": {
            "type": "tool_started",
            "call_id": nested.event.call_id,
            "name": "read_file",
            "arguments": '{"path": "f1.txt"}',
        },
    }


def test_delegating_ten_file_reads_grows_the_parents_context_by_the_answer_and_a_note(tmp_path, monkeypatch):
    from tests.support.delegation import ANSWER, measure
    from tests.support.scripted_server import ScriptedServer

    results = {}
    for delegate in (False, True):
        workspace = tmp_path / f"ws-{delegate}"
        workspace.mkdir()
        srv = ScriptedServer()
        try:
            results[delegate] = measure(srv, workspace, delegate, f"measure-{delegate}")
        finally:
            srv.close()
    alone, delegated = results[False], results[True]
    assert alone.chars > 100_000  # ten 10 KB reads, kept: under the 120,000-char high-water mark
    assert delegated.helper_answer_chars == len(ANSWER)
    assert delegated.chars <= len(ANSWER) + 500


def test_what_a_helper_could_not_ask_to_run_makes_the_parents_run_unfinished(server, files, monkeypatch):
    scripted(
        server,
        parent=[call("task", {"description": "build", "prompt": "build it"}), text("could not build")],
        helper=[call("run_command", {"command": "make"}), text("make needs approval")],
    )
    runtime = runtime_for(server, files, monkeypatch, mode="ask", sandbox_level="off")  # unconfined commands ask
    result = runtime.agent.run_turn("build")
    runtime.close()
    assert result.cannot_ask == ["run_command"]  # so `-p` exits 3 and says how to allow it
    helper_result = helper_requests(server)[-1]["messages"][-1]["content"]
    assert helper_result.startswith("refused: run_command needs the user's approval")
    assert parent_requests(server)[-1]["messages"][-1]["content"].startswith(
        "[helper 'build' answered after 2 steps; its transcript: session parent.task1; refused without approval: run_command]"
    )


def test_a_helpers_dollars_are_paid_by_the_parents_turn_and_session(server, files, monkeypatch):
    usage = {"prompt_tokens": 10_000, "completion_tokens": 100, "prompt_tokens_details": {"cached_tokens": 8_000}}
    task = call("task", {"description": "look", "prompt": "Read f0."}, usage=usage)
    scripted(server, parent=[task, text("done", usage=usage)], helper=[text("200 lines.", usage=usage)])
    runtime = runtime_for(server, files, monkeypatch, model="gpt-4o-mini")
    result = runtime.agent.run_turn("look")
    one = (2_000 * 0.15 + 8_000 * 0.075 + 100 * 0.6) / 1e6  # gpt-4o-mini's prices a million (test_cost.py checks)
    assert result.usage.requests == 2 and result.usage.cost_usd == pytest.approx(3 * one)
    assert runtime.agent.context_status().spent.cost_usd == pytest.approx(3 * one)
    runtime.close()
