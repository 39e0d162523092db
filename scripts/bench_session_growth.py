"""How a session file grows over a long run: its size after N steps against the bytes of the
messages it holds (the floor for a file that keeps everything).

    .venv/bin/python scripts/bench_session_growth.py [--steps 500] [--current PATH]

Drives `nanohermes -p` (this checkout, and `--current PATH` beside it) through N reads of
6-18 KB against the window-enforcing server of scripts/cache_sim.py with an unadvertised
window (the default 120,000-char budget), then weighs the session file by event type.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cache import READ_TASK, ROOT, ReadFiles, read_workspace, run_cli
from cache_sim import CacheServer


def weigh(path: Path) -> Counter:
    sizes: Counter = Counter()
    for line in path.read_bytes().splitlines():
        sizes[json.loads(line).get("type", "?")] += len(line) + 1
    return sizes


def run(src: Path, steps: int) -> Counter:
    with tempfile.TemporaryDirectory() as tmp:
        workspace, home = Path(tmp) / "ws", Path(tmp) / "home"
        workspace.mkdir()
        home.mkdir()
        read_workspace(workspace, 18_000)
        sim = CacheServer(ReadFiles(steps), 131_072, advertise=False)
        try:
            ok = run_cli(src, workspace, home, sim.url, [READ_TASK], lambda i, p: None, "max_steps = 100000\n")
        finally:
            sim.close()
        sizes = weigh(home / "sessions" / "bench.jsonl")
        sizes["finished"] = ok
        return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--current", type=Path)
    args = parser.parse_args()
    print("| policy | session file | message events | compaction records | other | file / messages |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, src in (("current", args.current), ("new", ROOT)):
        if src is None:
            continue
        sizes = run(src, args.steps)
        total = sum(v for k, v in sizes.items() if k != "finished")
        records = sizes["compaction"] + sizes["context"]
        other = total - sizes["message"] - records
        print(
            f"| {name} | {total / 1e6:.1f} MB | {sizes['message'] / 1e6:.1f} MB | {records / 1e6:.2f} MB "
            f"| {other / 1e6:.2f} MB | {total / sizes['message']:.2f} |{'' if sizes['finished'] else ' (did not finish)'}",
            flush=True,
        )


if __name__ == "__main__":
    main()
