"""Memory entries for tests: an Entry with fixed stamps, a memory.json written directly (as
another process, or an older version, would leave it), and a model whose reading compacts a
16K window and whose summary brings back a memory."""

import json
from pathlib import Path

from nanohermes.memory.candidates import MEMORY_MARKER
from nanohermes.memory.entry import Entry
from tests.support.scripted_server import call, is_summary_request, prompt_tokens, prose, text

STAMP = "2025-01-01T00:00:00Z"


def entry(text: str, *, kind: str = "fact", id: str = "e", uses: int = 0, updated: str = STAMP) -> Entry:
    return Entry(id, kind, text, STAMP, updated, uses)


def write_entries(path: Path, entries: list[Entry]) -> None:
    payload = {"version": 1, "entries": [e.__dict__ for e in entries]}
    path.write_text(json.dumps(payload), encoding="utf-8")


def compacting_model(server, workspace: Path, home: Path, memory_line: str, steps: int = 12) -> None:
    """Reads files until the 16K window (config.toml) compacts; each summary's memories section
    holds `memory_line` (`kind: text`)."""
    (home / "config.toml").write_text("context_window = 16384\n")
    for i in range(4):
        (workspace / f"m{i}.py").write_text(f"# module {i}\n" + "x = 1  # some code here\n" * 400)
    state = {"calls": 0}

    def handler(body):
        if is_summary_request(body):
            reply = text(f"Goal: review the modules.\n\n{MEMORY_MARKER}\n- {memory_line}")
        elif state["calls"] < steps:
            state["calls"] += 1
            reply = call("read_file", {"path": f"m{state['calls'] % 4}.py"}, content=prose(3_000, "Reasoning"))
        else:
            reply = text("reviewed")
        reply.usage = {"prompt_tokens": prompt_tokens(body), "completion_tokens": 10}
        return reply

    server.handler = handler
