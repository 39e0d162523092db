"""Memory before forgetting, through the real runtime and the scripted server: an automatic
compaction's own summary request brings back what the dropped messages should leave in memory,
and the next session's memory block carries it. No extra model call; secrets never saved."""

import json

from nanohermes.configure import load_config
from nanohermes.events import Notice
from nanohermes.loop.keeper import HELD_NOTICE
from nanohermes.memory.block import BLOCK_START
from nanohermes.memory.candidates import MEMORY_INSTRUCTION, MEMORY_MARKER
from nanohermes.runtime import build_runtime
from tests.support.scripted_server import call, is_summary_request, prompt_tokens, prose, text

PREFERENCE = "I always install Python packages with uv, never with pip."
REMEMBERED = "The user installs Python packages with uv, never pip."
SUMMARISER_REPLY = (
    f'Goal: review the modules.\nConstraints and preferences: "{PREFERENCE}"\n\n{MEMORY_MARKER}\n'
    f"- preference: {REMEMBERED}\n- fact: The staging password is hunter2.\n- none"
)


def runtime_for(server, workspace, monkeypatch, name, events=None, **flags):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    config = load_config(base_url=server.url, workspace=workspace, mode="auto", context_window=16_384, **flags)
    return build_runtime(config, name, (events if events is not None else []).append, approve=None)


def reading_model(server, steps: int = 12):
    """Reads a file per step with some reasoning, then answers; summaries reply with memories."""
    state = {"calls": 0}

    def handler(body):
        if is_summary_request(body):
            reply = text(SUMMARISER_REPLY)
        elif state["calls"] < steps:
            state["calls"] += 1
            reply = call(
                "read_file", {"path": f"m{state['calls'] % 4}.py"}, content=prose(3_000, "Reasoning about step")
            )
        else:
            reply = text("reviewed")
        reply.usage = {"prompt_tokens": prompt_tokens(body), "completion_tokens": 10}
        return reply

    server.handler = handler


def modules(workspace):
    for i in range(4):
        (workspace / f"m{i}.py").write_text(f"# module {i}\n" + "x = 1  # some code here\n" * 400)
    return workspace


def test_a_preference_stated_early_surfaces_in_the_next_sessions_memory_block(
    server, workspace, monkeypatch, isolated_home
):
    modules(workspace)
    reading_model(server)
    events = []
    first = runtime_for(server, workspace, monkeypatch, "first", events)
    first.agent.run_turn(f"{PREFERENCE} Now review the modules m0-m3.")
    summaries = [r for r in server.chat_requests() if is_summary_request(r)]
    assert summaries and summaries[0]["messages"][-1]["content"].endswith(MEMORY_INSTRUCTION)
    assert [(e.text, e.kind, e.auto) for e in first.memory.entries()] == [(REMEMBERED, "preference", True)]  # no secret
    summary_message = first.agent.messages[1]["content"]
    assert PREFERENCE in summary_message and MEMORY_MARKER not in summary_message and "hunter2" not in summary_message
    assert any("remembered from the compacted messages" in getattr(e, "text", "") for e in events)
    first.close()
    compactions = [
        json.loads(line)
        for line in (isolated_home / "sessions" / "first.jsonl").read_text().splitlines()
        if '"type":"compaction"' in line
    ]
    assert any(c["compaction"].get("memories") for c in compactions)

    requests_before = len(server.chat_requests())
    server.handler = None
    server.add(text("use uv add requests"))
    second = runtime_for(server, workspace, monkeypatch, "second")
    second.agent.run_turn("How should I install the requests package?")
    second.close()
    sent = server.chat_requests()[requests_before:]
    assert len(sent) == 1  # no extra model call anywhere for memory
    question = sent[0]["messages"][-1]["content"]
    assert (
        question.startswith("How should I install the requests package?\n\n" + BLOCK_START) and REMEMBERED in question
    )


def test_with_auto_memory_off_the_summary_asks_for_no_memories_and_none_are_saved(server, workspace, monkeypatch):
    modules(workspace)
    reading_model(server)
    runtime = runtime_for(server, workspace, monkeypatch, "off", auto_memory=False)
    runtime.agent.run_turn(f"{PREFERENCE} Now review the modules m0-m3.")
    runtime.close()
    summaries = [r for r in server.chat_requests() if is_summary_request(r)]
    assert summaries and not any(MEMORY_MARKER in r["messages"][-1]["content"] for r in summaries)
    assert runtime.memory.entries() == []
    assert MEMORY_MARKER not in runtime.agent.messages[1]["content"]  # the section never stays in a summary


def test_in_ask_mode_a_compactions_memories_wait_for_a_yes_said_after_the_compaction_line(
    server, workspace, monkeypatch
):
    modules(workspace)
    reading_model(server)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    events = []
    config = load_config(base_url=server.url, workspace=workspace, mode="ask", context_window=16_384)
    runtime = build_runtime(config, "asked", events.append, approve=None)  # reads run unasked; remember would ask
    runtime.agent.run_turn(f"{PREFERENCE} Now review the modules m0-m3.")
    said = [e.text for e in events if isinstance(e, Notice)]
    compacted = next(i for i, text in enumerate(said) if text.startswith("context compacted automatically"))
    held = next(i for i, text in enumerate(said) if text.startswith(HELD_NOTICE))
    assert compacted < held and REMEMBERED in said[held] and "/memory confirm" in said[held]
    assert runtime.memory.entries() == [] and [e.text for e in runtime.memory.pending.entries()] == [REMEMBERED]
    runtime.close()
