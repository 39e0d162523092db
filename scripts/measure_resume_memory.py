"""Peak memory of resuming a big session: how much more than the working set does loading hold?

    python scripts/measure_resume_memory.py                 # make a 300 MB session, measure a resume
    python scripts/measure_resume_memory.py --keep-recent 400   # a working set of ~8 MB
    python scripts/measure_resume_memory.py --code /tmp/nh-before   # another code tree (git archive)

The session is what a long day of work writes: turns of a request, a command whose full output
(240 KB) is kept for recall while the model saw 20 KB of it, an answer; a compaction every few
turns keeps the working set small, as a real session's is. Each measurement runs in a fresh
interpreter: its resident set after the imports, then its peak (ru_maxrss) while
`Session(home, name)` replays the file. The working set is what the resumed conversation holds
(its messages as JSON).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FULL_OUTPUT_CHARS = 240_000  # a long command log: kept whole for recall
SHOWN_OUTPUT_CHARS = 20_000  # what the model saw of it (the tool-result cap)
TURNS_PER_COMPACTION = 4  # every fourth turn a compaction keeps the recent tail and a summary
KEEP_RECENT = 10  # messages a compaction keeps, as the context engine does


def _line(event: dict) -> str:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"


def make_session(path: Path, size_mb: int, keep_recent: int = KEEP_RECENT) -> None:
    """Write a session file of about size_mb MB (the format of nanohermes/storage/session.py)."""
    target = size_mb * 2**20
    working = 0  # length of the working set before the next event (system excluded)
    with open(path, "w", encoding="utf-8") as f:
        f.write(_line({"type": "meta", "version": 1, "created": time.time(), "workspace": "/tmp/measure"}))
        f.write(_line({"type": "title", "title": "a long session"}))
        turn = 0
        while f.tell() < target:
            turn += 1
            call_id = f"call_{turn}"
            log = (f"line {turn}: " + "x" * 70 + "\n") * (FULL_OUTPUT_CHARS // 80)
            messages = [
                {"role": "user", "content": f"request {turn}: run the tests and tell me what fails"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "run_command", "arguments": json.dumps({"command": "pytest -q"})},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": call_id, "content": log[:SHOWN_OUTPUT_CHARS]},
                {"role": "assistant", "content": f"Turn {turn}: 2 tests fail in test_parser.py."},
            ]
            for message in messages:
                f.write(
                    _line(
                        {
                            "type": "message",
                            "message": message,
                            **({"facts": {"exit_code": 1}} if message["role"] == "tool" else {}),
                        }
                    )
                )
                if message["role"] == "tool":
                    f.write(_line({"type": "tool_output", "id": call_id, "full": log}))
            working += len(messages)
            if turn % TURNS_PER_COMPACTION == 0:
                summary = {
                    "role": "user",
                    "content": f"[Earlier conversation summary]\nturns 1–{turn}: tests run, parser fixed.",
                }
                kept = list(range(max(0, working - keep_recent), working))
                f.write(
                    _line({"type": "compaction", "messages": [summary, *kept], "compaction": {"layers": ["summary"]}})
                )
                working = 1 + len(kept)
        f.write(_line({"type": "stats", "messages": turn * 4, "title": "a long session", "workspace": "/tmp/measure"}))


MEASURE = r"""
import json, os, resource, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from nanohermes.storage.session import Session

def rss_kb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))

before = rss_kb()
session = Session(Path(sys.argv[2]), sys.argv[3])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
held = rss_kb()
working = len(json.dumps(session.state.messages, ensure_ascii=False))
session.close()
print(json.dumps({"before_kb": before, "peak_kb": peak, "held_kb": held, "working_set_bytes": working,
                  "messages": len(session.state.messages)}))
"""


def measure(code: Path, home: Path, name: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, str(code), str(home), name], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=int, default=300)
    parser.add_argument("--keep-recent", type=int, default=KEEP_RECENT, help="messages each compaction keeps")
    parser.add_argument(
        "--code",
        type=Path,
        default=Path(__file__).resolve().parent.parent,
        help="the code tree to measure (default: this checkout)",
    )
    parser.add_argument("--json", action="store_true", help="print the measurement as one JSON object")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "sessions").mkdir(mode=0o700)
        path = home / "sessions" / "big.jsonl"
        make_session(path, args.size_mb, args.keep_recent)
        result = measure(args.code, home, "big")
        result["file_bytes"] = path.stat().st_size
    if args.json:
        print(json.dumps(result))
        return
    mb = lambda kb: kb / 1024  # noqa: E731
    file_mb = result["file_bytes"] / 2**20
    growth = mb(result["peak_kb"] - result["before_kb"])
    working = result["working_set_bytes"] / 2**20
    print(f"code: {args.code}")
    print(
        f"session file: {file_mb:.0f} MB; working set after resume: {result['messages']} messages, {working:.2f} MB of JSON"
    )
    print(
        f"resident before loading: {mb(result['before_kb']):.0f} MB; peak while loading: {mb(result['peak_kb']):.0f} MB "
        f"(+{growth:.0f} MB); held after: {mb(result['held_kb']):.0f} MB"
    )
    print(f"peak growth = {growth / file_mb:.2f}× the file, {growth / max(working, 1e-9):.1f}× the working set")


if __name__ == "__main__":
    main()
