"""Switching model and mode mid-session (/model, /mode, /reset) over a real runtime and the
scripted server, and what plan mode tells a model that calls a tool it blocks."""

from __future__ import annotations

import pytest

from nanohermes.configure import load_config
from nanohermes.runtime import build_runtime
from nanohermes.sandbox.probe import probe
from nanohermes.ui.commands import run_slash_command
from tests.support.scripted_server import call, text
from tests.test_cli_sessions import ask


class SwitchingRepl:
    """What the switch commands use of the REPL: the runtime, a place to print, the model list."""

    def __init__(self, runtime, models=()):
        self.runtime = runtime
        self.out: list[str] = []
        self._models = list(models)

    def say(self, text: str) -> None:
        self.out.append(text)

    def show(self, lines) -> None:
        self.out.append("\n".join("".join(text for text, _ in line) for line in lines))

    def models(self) -> list[str]:
        return self._models


@pytest.fixture
def repl(server, workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = load_config(base_url=server.url, workspace=workspace, mode="auto", model="first-model")
    runtime = build_runtime(config, "switch", lambda event: None, approve=None)
    yield SwitchingRepl(runtime, models=["first-model", "second-model"])
    runtime.close()


SANDBOX = probe().bwrap or probe().landlock_abi >= 4


def offered(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def test_model_switch_takes_effect_on_the_next_request(repl, server):
    server.add(text("a"), text("b"))
    repl.runtime.agent.run_turn("one")
    run_slash_command(repl, "/model second-model")
    assert repl.out[-1] == "model second-model from the next request"
    repl.runtime.agent.run_turn("two")
    first, second = server.chat_requests()
    assert (first["model"], second["model"]) == ("first-model", "second-model")
    assert first["messages"][0] == second["messages"][0] and first["tools"] == second["tools"]  # same prefix


def test_model_without_a_name_shows_the_current_one_and_the_servers_list(repl):
    run_slash_command(repl, "/model")
    assert repl.out[-1] == "model first-model; the server lists: first-model, second-model"
    run_slash_command(repl, "/model unlisted")
    assert "not in the server's list" in repl.out[-1]


def test_mode_switch_changes_only_the_mode_line_and_plan_modes_tools(repl, server):
    server.add(text("a"), text("b"), text("c"))
    repl.runtime.agent.run_turn("one")
    run_slash_command(repl, "/mode plan")
    repl.runtime.agent.run_turn("two")
    run_slash_command(repl, "/mode auto")
    repl.runtime.agent.run_turn("three")
    auto1, plan, auto2 = server.chat_requests()
    systems = [r["messages"][0]["content"] for r in (auto1, plan, auto2)]
    assert "Mode: auto." in systems[0] and "Mode: plan." in systems[1] and systems[2] == systems[0]
    assert [line for line in systems[1].splitlines() if not line.startswith("Mode:")] == [
        line for line in systems[0].splitlines() if not line.startswith("Mode:")
    ]
    assert "write_file" in offered(auto1) and "write_file" not in offered(plan) and offered(auto2) == offered(auto1)


def test_system_message_and_tools_stay_byte_identical_across_turns_without_a_switch(repl, server):
    server.add(text("a"), text("b"), text("c"))
    for question in ("one", "two", "three"):
        repl.runtime.agent.run_turn(question)
    requests = server.chat_requests()
    assert len({r["messages"][0]["content"] for r in requests}) == 1
    assert all(r["tools"] == requests[0]["tools"] for r in requests)


def test_a_tool_blocked_by_plan_mode_says_so_instead_of_unknown_tool(repl, server, workspace):
    run_slash_command(repl, "/mode plan")
    server.add(call("write_file", {"path": "plan.txt", "content": "x"}), text("I will propose it instead."))
    repl.runtime.agent.run_turn("write plan.txt")
    result = next(m for m in server.chat_requests()[1]["messages"] if m["role"] == "tool")["content"]
    assert result.startswith("blocked in plan mode: write_file can change files or run commands")
    assert "unknown tool" not in result and not (workspace / "plan.txt").exists()


@pytest.mark.skipif(not SANDBOX, reason="no sandbox can run commands here")
def test_plan_mode_runs_commands_in_the_read_only_sandbox_and_blocks_leaving_it(server, workspace):
    (workspace / "notes.txt").write_text("plan me\n")
    server.add(call("run_command", {"command": "cat notes.txt; touch x"}))
    server.add(call("run_command", {"command": "touch y", "unsandboxed": True, "reason": "r"}), text("planned"))
    r = ask(server, workspace, "do it", "--mode", "plan")
    assert r.returncode == 0 and not (workspace / "x").exists() and not (workspace / "y").exists()
    ran = server.chat_requests()[1]["messages"][-1]["content"]
    assert "plan me" in ran and "Read-only file system" in ran  # it ran, and changed nothing
    left = server.chat_requests()[2]["messages"][-1]["content"]
    assert left.startswith("blocked in plan mode: commands run only inside the sandbox")


def test_mode_rejects_an_unknown_mode_and_shows_the_choices(repl):
    run_slash_command(repl, "/mode wild")
    assert "unknown mode 'wild'" in repl.out[-1] and "plan|ask|auto" in repl.out[-1]
    assert repl.runtime.config.mode == "auto"


def test_a_mode_switch_survives_reset(repl, server):
    run_slash_command(repl, "/mode plan")
    run_slash_command(repl, "/reset")
    server.add(text("a"))
    repl.runtime.agent.run_turn("one")
    assert "Mode: plan." in server.chat_requests()[0]["messages"][0]["content"]
