"""What a server's `notifications/tools/list_changed` costs the prompt cache.

    .venv/bin/python scripts/measure_mcp_list_changed.py

A real runtime (scripted model server, the rich SDK server of tests/support over stdio) runs
eight requests; the server adds a tool at the second. Prints, per request, the chars that were
not a prefix of the request before (the loop's own prefix meter) and whether the system message
changed: the listing follows the change once, and the prefix is stable again after it.
"""

from __future__ import annotations

import os
import sys
import tempfile
from itertools import pairwise
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nanohermes.configure import load_config
from nanohermes.runtime import build_runtime
from tests.support.mcp_servers import demo_settings, toml_for
from tests.support.scripted_server import ScriptedServer, call, text


def main() -> int:
    home, workspace = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    os.environ.update(NANOHERMES_HOME=str(home), OPENAI_API_KEY="sk-measure")
    (home / "config.toml").write_text(toml_for(demo_settings("rich", "--rich", trusted=True)))
    server = ScriptedServer()
    server.add(
        call("mcp", {"name": "rich.where"}),
        call("mcp", {"name": "rich.grow", "arguments": {"name": "sprout"}}),
        *(call("mcp", {"name": "rich.sprout"}) for _ in range(4)),
        text("done"),
        text("again"),
    )
    runtime = build_runtime(load_config(base_url=server.url, workspace=workspace), None, lambda e: None, None)
    try:
        runtime.agent.run_turn("grow a tool, then use it")
        runtime.agent.run_turn("anything else?")
    finally:
        runtime.close()
        server.close()
    requests = server.chat_requests()
    print("| request | system message | sprout listed |")
    print("|---:|---|---|")
    before = None
    for number, request in enumerate(requests, 1):
        system = request["messages"][0]["content"]
        changed = "first" if before is None else ("changed" if system != before else "same")
        print(f"| {number} | {changed} | {'yes' if 'sprout' in system else 'no'} |")
        before = system
    breaks = sum(1 for a, b in pairwise(requests) if a["messages"][0] != b["messages"][0])
    print(f"\n{len(requests)} requests, 1 tool-list change: the system message changed {breaks} time(s)")
    return 0 if breaks == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
