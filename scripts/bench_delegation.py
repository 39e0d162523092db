"""What delegation keeps out of the parent's window: an answer that needs reading ten 10 KB
files, read by the parent itself or by a helper agent (the `task` tool), against the scripted
server through the real runtime. Prints the parent's context growth (the messages between the
question and the answer) in serialized chars and o200k tokens.

    .venv/bin/python scripts/bench_delegation.py
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.support.delegation import measure  # noqa: E402
from tests.support.scripted_server import ScriptedServer  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["NANOHERMES_HOME"] = str(Path(tmp) / "home")  # never the real ~/.nanohermes
        print("| parent | context growth (chars) | (o200k tokens) |")
        print("|---|---:|---:|")
        for delegate in (False, True):
            workspace = Path(tmp) / f"ws-{delegate}"
            workspace.mkdir()
            server = ScriptedServer()
            try:
                growth = measure(server, workspace, delegate, f"bench-{delegate}")
            finally:
                server.close()
            label = (
                f"delegates (helper answer {growth.helper_answer_chars} chars)"
                if delegate
                else "reads the ten files itself"
            )
            print(f"| {label} | {growth.chars:,} | {growth.tokens:,} |")


if __name__ == "__main__":
    main()
