"""Requests and wall time of a run that goes nowhere: the model reads calc.py three times (the
third read refused by the loop guard), sends the same edit that never matches, and goes round
again, for as long as it is let. A scripted server on 127.0.0.1 plays the model; each reply can
be delayed to stand for a CPU server's latency (--reply-seconds).

    python scripts/measure_hopeless_loop.py [--reply-seconds 0.2] [--runs 3]

Run it from two checkouts to compare (the numbers are the CLI's own, in one process).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from typer.testing import CliRunner

from nanohermes.cli import app
from tests.support.scripted_server import ScriptedServer, call

CALLS = 200  # more than any step limit: the run decides when to stop


def one_run(reply_seconds: float) -> tuple[int, float, int]:
    """(requests, seconds, exit code) of one run."""
    with tempfile.TemporaryDirectory() as tmp:
        workspace, home = Path(tmp, "ws"), Path(tmp, "home")
        workspace.mkdir()
        home.mkdir()
        (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
        read = call("read_file", {"path": "calc.py"})
        edit = call("edit_file", {"path": "calc.py", "old_text": "def add(x, y): return x*y", "new_text": "..."})
        server = ScriptedServer()
        try:
            for i in range(CALLS):
                scripted = edit if i % 4 == 3 else read
                server.add(replace(scripted, first_delay=reply_seconds))
            os.environ["NANOHERMES_HOME"] = str(home)
            started = time.monotonic()
            result = CliRunner().invoke(
                app, ["-p", "fix add in calc.py", "--yes", "--base-url", server.url, "-C", str(workspace)]
            )
            seconds = time.monotonic() - started
            return len(server.chat_requests()), seconds, result.exit_code
        finally:
            server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reply-seconds", type=float, default=0.0, help="delay before each reply's first chunk")
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    results = [one_run(options.reply_seconds) for _ in range(options.runs)]
    requests = statistics.median(r[0] for r in results)
    seconds = statistics.median(r[1] for r in results)
    print(
        f"requests (median of {options.runs}): {requests:g}; wall time: {seconds:.2f} s; exit codes {[r[2] for r in results]}"
    )


if __name__ == "__main__":
    main()
