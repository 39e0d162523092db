"""Background tasks through the real runtime, the scripted server and real subprocesses: a
task outlives its turn, a session that ends stops its tasks, approvals apply, /tasks lists."""

import re

import pytest

from nanohermes.configure import load_config
from nanohermes.runtime import build_runtime
from nanohermes.slash.status import tasks_command
from tests.support.scripted_server import call, text
from tests.tools.test_shell import alive, dies_soon


def runtime_for(server, workspace, monkeypatch, mode="auto", approve=None, name="bg", sandbox=None):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = load_config(base_url=server.url, workspace=workspace, mode=mode, sandbox_level=sandbox)
    return build_runtime(config, name, lambda event: None, approve=approve)


def tool_results(server) -> list[str]:
    messages = server.chat_requests()[-1]["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


@pytest.fixture
def runtime(server, workspace, monkeypatch):
    rt = runtime_for(server, workspace, monkeypatch)
    yield rt
    rt.close()


def test_a_background_task_outlives_the_turn_that_started_it(runtime, server):
    server.add(call("run_command", {"command": "sleep 0.5; echo built", "background": True}), text("started it"))
    assert runtime.agent.run_turn("build in the background").final_text == "started it"
    assert runtime.agent.ctx.tasks.get("bg1").state == "running"  # the turn is over, the task is not
    server.add(call("task_output", {"id": "bg1", "wait": 10}), text("it built"))
    runtime.agent.run_turn("is it done?")
    assert re.search(r"exited with code 0 after [\d.]+ s\n\[stdout\]\nbuilt$", tool_results(server)[-1])


def test_a_session_that_ends_with_tasks_running_stops_their_process_groups(server, workspace, monkeypatch):
    runtime = runtime_for(server, workspace, monkeypatch, sandbox="off")  # pids as the system sees them
    server.add(
        call("run_command", {"command": "sleep 60 & echo $!; sleep 60", "background": True}),
        call("task_output", {"id": "bg1", "wait": 0.5}),
        text("running"),
    )
    runtime.agent.run_turn("start a server")
    task = runtime.agent.ctx.tasks.get("bg1")
    grandchild = int(re.search(r"\[stdout\]\n(\d+)", tool_results(server)[-1]).group(1))
    assert alive(task.pid) and alive(grandchild)
    runtime.close()
    assert dies_soon(task.pid) and dies_soon(grandchild)


def test_background_commands_ask_for_approval_like_any_command(server, workspace, monkeypatch):
    asked = []
    runtime = runtime_for(
        server,
        workspace,
        monkeypatch,
        mode="ask",
        sandbox="off",
        approve=lambda tool, args, preview: asked.append(preview) or "no",
    )
    server.add(call("run_command", {"command": "sleep 30", "background": True}), text("ok"))
    try:
        runtime.agent.run_turn("start it")
    finally:
        runtime.close()
    assert asked == ["$ sleep 30\n(in the background)"]
    assert runtime.agent.ctx.tasks.all() == [] and tool_results(server)[-1].startswith("refused: the user declined")


def test_waiting_on_a_task_again_and_again_is_not_refused_as_a_repeated_call(runtime, server):
    server.add(
        call("run_command", {"command": "sleep 1.2; echo ready", "background": True}),
        *[call("task_output", {"id": "bg1", "wait": 0.3}) for _ in range(6)],
        text("ready now"),
    )
    result = runtime.agent.run_turn("wait for it")
    assert result.stop_code is None and result.final_text == "ready now"
    assert not any("repeat number" in r for r in tool_results(server))
    assert "ready" in "".join(tool_results(server))


def test_tasks_command_lists_the_tasks_and_stops_one(runtime, server):
    server.add(
        call("run_command", {"command": "sleep 30", "background": True}),
        call("run_command", {"command": "echo hi", "background": True}),
        text("two"),
    )
    runtime.agent.run_turn("start two")
    tasks = runtime.agent.ctx.tasks
    assert tasks.get("bg2").done.wait(30)  # drained and reaped: wait() returns once the shell exits, before that
    rows = tasks_command(tasks, "").splitlines()
    assert rows[0].startswith("bg1   running for") and rows[0].endswith("$ sleep 30")
    assert rows[1].startswith("bg2   exited with code 0 after") and "out 3 B, err 0 B" in rows[1]
    assert tasks_command(tasks, "stop bg1").startswith("bg1: stopped after")
    assert tasks_command(tasks, "stop bg2").startswith("bg2 had already finished: exited with code 0")
    assert tasks_command(tasks, "stop nope").startswith("error: no background task 'nope'")
    assert tasks_command(tasks, "kill") == "usage: /tasks | /tasks stop ID | /tasks diff|apply|drop NAME"
