"""The delegation trajectory: an answer that needs reading ten 10 KB files, done by the parent
itself or handed to a helper (`task`), through the real runtime and the scripted server.
Used by tests/loop/test_subagents.py and scripts/bench_delegation.py."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from nanohermes.configure import load_config
from nanohermes.context import count_tokens, message_size
from nanohermes.loop.subagents import HELPER_BRIEF
from nanohermes.runtime import build_runtime
from tests.support.scripted_server import call, is_summary_request, text

FILES = 10
FILE_BYTES = 10_000
NEEDLE = "The config loader is src/conf/load.py, function load_settings, line 42."
ANSWER = f"Read docs/part0.txt … docs/part9.txt. {NEEDLE} It is mentioned only in docs/part7.txt."
QUESTION = "Where is the config loader? The docs folder says."


@dataclass(frozen=True)
class Growth:
    """What the parent's context gained between the user's message and its final answer."""

    chars: int
    tokens: int
    helper_answer_chars: int = 0


def write_docs(workspace: Path) -> None:
    (workspace / "docs").mkdir(exist_ok=True)
    line = "Notes on the build, the release process and the layout of the repository, kept for reference.\n"
    for i in range(FILES):
        body = (line * (FILE_BYTES // len(line) + 1))[: FILE_BYTES - len(NEEDLE) - 1]
        (workspace / "docs" / f"part{i}.txt").write_text(body + (NEEDLE if i == 7 else "x" * len(NEEDLE)) + "\n")


def _is_helper(body: dict) -> bool:
    return any(HELPER_BRIEF in (m.get("content") or "") for m in body["messages"] if m["role"] == "user")


def script(server, delegate: bool) -> None:
    reads = [call("read_file", {"path": f"docs/part{i}.txt"}) for i in range(FILES)]
    if delegate:
        parent = [
            call("task", {"description": "find the config loader", "prompt": f"{QUESTION} Read every file in docs/."}),
            text(NEEDLE),
        ]
        helper = [*reads, text(ANSWER)]
    else:
        parent, helper = [*reads, text(NEEDLE)], []
    queues = {True: helper, False: parent}
    server.handler = lambda body: (
        text("Goal: summarised.") if is_summary_request(body) else queues[_is_helper(body)].pop(0)
    )


def measure(server, workspace: Path, delegate: bool, session: str) -> Growth:
    """Run the trajectory; the growth of the parent's messages, in serialized chars and o200k tokens."""
    write_docs(workspace)
    script(server, delegate)
    config = load_config(base_url=server.url, workspace=workspace, mode="auto", api_key="sk-test")
    runtime = build_runtime(config, session, lambda event: None, approve=None)
    try:
        runtime.agent.run_turn(QUESTION)
        work = runtime.agent.messages[2:-1]  # after the system message and the question, before the answer
    finally:
        runtime.close()
    answer = work[-1]["content"].split("\n", 1)[1] if delegate else ""
    return Growth(sum(message_size(m) for m in work), count_tokens(json.dumps(work, ensure_ascii=False)), len(answer))
