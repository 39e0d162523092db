"""Wall time of three helpers in worktrees of their own (`task` with isolation = "worktree"), side by
side (task_parallel = 3) and one after another (task_parallel = 1), alternating in one run.

Each run is a real runtime over the scripted server on a fresh git repository of REPO_FILES files:
the parent's one reply holds three `task` calls; each helper makes two requests (a write_file of
its own file, then its answer), each reply held back REPLY_DELAY_S before its first byte, as a
model's latency. "tools" is the parent's calls from the first start to the last finish (worktree
made, helper run, changes read and brought in, worktree removed); "turn" the whole turn.

Usage: python scripts/bench_helpers.py [--runs N] [--delay SECONDS]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HELPERS = 3
REPLY_DELAY_S = 1.0  # before a reply's first byte: a hosted model's time to first token, roughly
REPO_FILES = 300  # a small project's checkout, made anew for each helper's worktree
MARK = "HELPER-"


def make_repo(path: Path) -> None:
    from tests.support.git_repos import make_repo as made

    files = {f"pkg{i % 10}/mod{i}.py": f"def f{i}():\n    return {i}\n" * 40 for i in range(REPO_FILES)}
    made(path, {**files, **{f"out{n}.py": "x = 0\n" for n in range(HELPERS)}})


def script(server, delay: float) -> None:
    """Replies by who asks: the parent's two, each helper's write then answer, all `delay` late."""
    from nanohermes.loop.subagents import HELPER_BRIEF
    from tests.support.scripted_server import call, calls, text

    tasks = [
        ("task", {"description": f"h{n}", "prompt": f"{MARK}{n}: write out{n}.py", "isolation": "worktree"})
        for n in range(HELPERS)
    ]
    queues = {"parent": [calls(*tasks, first_delay=delay), text("done", first_delay=delay)]}
    for n in range(HELPERS):
        write = call("write_file", {"path": f"out{n}.py", "content": f"x = {n + 1}\n"}, first_delay=delay)
        queues[str(n)] = [write, text(f"wrote out{n}.py", first_delay=delay)]

    def answer(body):
        for message in body["messages"]:
            if message["role"] == "user" and HELPER_BRIEF in (message.get("content") or ""):
                return queues[message["content"][len(MARK)]].pop(0)
        return queues["parent"].pop(0)

    server.handler = answer


def one_run(parallel: int, delay: float) -> tuple[float, float]:
    """(tools seconds, turn seconds) of one turn with `parallel` helpers at once."""
    from nanohermes import events as ev
    from nanohermes.configure import load_config
    from nanohermes.runtime import build_runtime
    from tests.support.scripted_server import ScriptedServer

    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as tmp:
        os.environ["NANOHERMES_HOME"] = home
        os.environ["OPENAI_API_KEY"] = "sk-bench"
        repo = Path(tmp) / "repo"
        make_repo(repo)
        server = ScriptedServer()
        script(server, delay)
        stamped: list[tuple[float, object]] = []
        config = load_config(base_url=server.url, workspace=repo, mode="auto", task_parallel=parallel)
        runtime = build_runtime(config, "bench", lambda e: stamped.append((time.perf_counter(), e)), None)
        try:
            start = time.perf_counter()
            runtime.agent.run_turn("write the three files")
            turn = time.perf_counter() - start
        finally:
            runtime.close()
            server.close()
        if [(repo / f"out{n}.py").read_text() for n in range(HELPERS)] != [f"x = {n + 1}\n" for n in range(HELPERS)]:
            raise SystemExit("a helper's change was not brought in")
        first = min(t for t, e in stamped if isinstance(e, ev.ToolStarted))
        last = max(t for t, e in stamped if isinstance(e, ev.ToolFinished))
        return last - first, turn


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5, help="turns of each, alternating")
    parser.add_argument("--delay", type=float, default=REPLY_DELAY_S, help="seconds before each reply")
    args = parser.parse_args()
    times: dict[int, list[tuple[float, float]]] = {HELPERS: [], 1: []}
    one_run(HELPERS, 0.0)  # warm-up: imports, git's caches
    for _ in range(args.runs):
        for parallel in (HELPERS, 1):
            times[parallel].append(one_run(parallel, args.delay))
    print(f"{HELPERS} helpers in worktrees, 2 requests each, replies {args.delay:g} s late, {args.runs} runs each")
    print(f"{'':<26}{'tools (median s)':>18}{'turn (median s)':>18}")
    medians = {}
    for parallel, label in ((1, "one after another"), (HELPERS, f"side by side ({HELPERS})")):
        tools = statistics.median(t for t, _ in times[parallel])
        turn = statistics.median(t for _, t in times[parallel])
        medians[parallel] = (tools, turn)
        print(f"{label:<26}{tools:>18.2f}{turn:>18.2f}")
    print(
        f"side by side / one after another: tools {medians[HELPERS][0] / medians[1][0]:.2f}, "
        f"turn {medians[HELPERS][1] / medians[1][1]:.2f}"
    )


if __name__ == "__main__":
    main()
