"""Slash commands over a real runtime (real session, memory, prompt) and the scripted server."""

import itertools
import json
import subprocess
import sys

import pytest

from nanohermes.configure import load_config
from nanohermes.context.tokens import count_tokens
from nanohermes.runtime import build_runtime
from nanohermes.ui.commands import COMMANDS, run_slash_command
from tests.support.scripted_server import call, is_summary_request, text


class FakeRepl:
    """The part of the REPL commands use: the runtime and a place to print."""

    def __init__(self, runtime):
        self.runtime = runtime
        self.out: list[str] = []

    def say(self, text: str, style: str = "") -> None:
        self.out.append(text)

    def show(self, lines) -> None:
        self.out.append("\n".join("".join(text for text, _ in line) for line in lines))


@pytest.fixture
def repl(server, workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = load_config(base_url=server.url, workspace=workspace, mode="auto")
    events = []
    runtime = build_runtime(config, "cmd", events.append, approve=None)
    r = FakeRepl(runtime)
    r.events = events
    yield r
    runtime.close()


def test_fixed_cost_of_a_request_stays_under_2500_tokens(repl):
    agent = repl.runtime.agent
    fixed = count_tokens(agent.messages[0]["content"]) + count_tokens(json.dumps(agent.tool_schemas()))
    assert fixed < 2_500


def test_compact_with_focus_passes_the_focus_and_prints_sizes(repl, server):
    server.add(*[call("read_file", {"path": f"f{i}.txt"}) for i in range(7)], text("done"))
    server.handler = lambda body: text("Summary about the parser.")
    repl.runtime.agent.run_turn("look around")
    run_slash_command(repl, "/compact the parser")
    summary_request = [r for r in server.chat_requests() if is_summary_request(r)][-1]
    assert "the parser" in summary_request["messages"][-1]["content"]
    notice = [e.text for e in repl.events if type(e).__name__ == "Notice"][-1]
    assert "context compacted on request" in notice and "→" in notice


def test_context_draws_every_part_against_the_budget_and_what_the_last_request_had_cached(repl, server):
    cached = {"prompt_tokens": 2_000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 1_500}}
    server.add(call("read_file", {"path": "x.txt"}), text("ok", usage=cached))
    (repl.runtime.config.workspace / "x.txt").write_text("hello\n" * 50)
    repl.runtime.agent.run_turn("read x")
    run_slash_command(repl, "/context")
    out = repl.out[-1]
    for part in (
        "built-in rules",
        "memory block",
        "tool schemas",
        "user",
        "assistant",
        "tool results",
        "total",
        "120,000 chars",
    ):
        assert part in out
    assert any(line.startswith("[") and line.endswith("]") for line in out.splitlines())
    assert out.splitlines()[-2].startswith("last request: 2,000 tokens in (75 % cached), $")
    assert out.splitlines()[-1].startswith("session so far: $")  # the default model, gpt-4o-mini, has a price


def test_memory_add_then_it_travels_with_the_next_relevant_user_message(repl, server):
    run_slash_command(repl, "/memory add preference: the user wants pytest with -x")
    server.add(text("ok"))
    repl.runtime.agent.run_turn("how should I run pytest here?")
    sent = server.chat_requests()[-1]["messages"]
    assert sent[-1]["role"] == "user" and sent[-1]["content"].startswith("how should I run pytest here?\n\n")
    assert "the user wants pytest with -x" in sent[-1]["content"]
    assert "the user wants pytest with -x" not in sent[0]["content"]


def test_reset_rereads_project_guidance(repl, server):
    (repl.runtime.config.workspace / "AGENTS.md").write_text("Always answer in French.\n")
    server.add(text("a"))
    repl.runtime.agent.run_turn("hi")
    assert "Always answer in French." not in server.chat_requests()[-1]["messages"][0]["content"]
    run_slash_command(repl, "/reset")
    server.add(text("b"))
    repl.runtime.agent.run_turn("hi again")
    assert "Always answer in French." in server.chat_requests()[-1]["messages"][0]["content"]


def test_unknown_command_and_help(repl):
    assert run_slash_command(repl, "/nope") is True and "unknown command /nope" in repl.out[-1]
    run_slash_command(repl, "/help")
    assert all(name in repl.out[-1] for name in COMMANDS)
    assert run_slash_command(repl, "/exit") is False


def test_help_lists_every_command_in_its_fixed_order(repl):
    run_slash_command(repl, "/help")
    listed = [line.split()[0] for line in repl.out[-1].splitlines() if line.startswith("  /")]
    assert listed == [
        *("/help", "/exit", "/quit", "/clear", "/reset", "/session", "/compact", "/context", "/cost", "/show"),
        *("/memory", "/diff", "/undo", "/rewind", "/fork", "/permissions", "/sandbox", "/model", "/mode", "/resume"),
        *("/tasks", "/mcp", "/init"),
    ]
    assert listed == list(COMMANDS)


def test_rewind_picker_lists_requests_with_what_changed_since_and_asks_what_to_restore(repl, server, workspace):
    server.add(call("run_command", {"command": "echo 1 > one.txt; echo 2 > two.txt"}), text("made"), text("hi"))
    repl.runtime.agent.run_turn("make two files\nwith details")
    repl.runtime.agent.run_turn("say hi")
    answers = iter(["2", "c"])
    repl.ask = lambda question: next(answers)
    run_slash_command(repl, "/rewind")
    picker, outcome = repl.out[-2], repl.out[-1]
    assert "1. say hi\n" in picker and "2. make two files · 2 file(s) changed since" in picker
    assert "rewound code to before: make two files" in outcome and "removed 2: one.txt, two.txt" in outcome
    assert not (workspace / "one.txt").exists() and "say hi" in str(repl.runtime.agent.messages)
    run_slash_command(repl, "/rewind 9")
    assert "not rewound: no request 9 back" in repl.out[-1]
    run_slash_command(repl, "/rewind x y z")
    assert "usage: /rewind" in repl.out[-1]


def test_help_order_does_not_depend_on_which_command_module_was_imported_first():
    code = (
        "import nanohermes.ui.init_command, nanohermes.ui.switch_commands\n"
        "from nanohermes.ui.commands import COMMANDS\nprint(' '.join(COMMANDS))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == list(COMMANDS)


def test_system_message_and_tools_are_byte_identical_while_each_turn_keeps_its_own_memories(repl, server):
    from nanohermes.memory.block import BLOCK_START

    run_slash_command(repl, "/memory add fact: the parser lives in src/parse.py")
    run_slash_command(repl, "/memory add preference: use black for formatting")
    server.add(text("a"), text("b"), text("c"))
    for question in ("where is the parser?", "how do I format code?", "unrelated question about weather"):
        repl.runtime.agent.run_turn(question)
    requests = server.chat_requests()
    assert len({json.dumps([r["messages"][0], r["tools"]]) for r in requests}) == 1
    users = [m["content"] for m in requests[-1]["messages"] if m["role"] == "user"]
    assert "src/parse.py" in users[0] and "black" in users[1] and BLOCK_START not in users[2]
    for earlier, later in itertools.pairwise(requests):  # every request extends the one before
        assert later["messages"][: len(earlier["messages"])] == earlier["messages"]
