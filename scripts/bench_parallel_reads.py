"""Wall time of one reply with five slow read-only calls, before and after, side by side in one run.

Two cases, each a real Agent over the scripted server with the built-in tools:
  5 web_fetch   five URLs of a local HTTP server that answers each after 200 ms
  5 grep        five greps over a generated tree (rg already uses every core: less to gain)
"tools" is the time from the first call's start to the last call's finish (the events the front
ends see); "turn" is the whole turn (the two scripted requests included).

Each checkout runs in its own process (PYTHONPATH); runs alternate between them so load spikes
hit both alike. `--before` names the checkout to compare with (e.g. `git worktree add
/tmp/before main`); without it only this checkout is measured.

Usage: python scripts/bench_parallel_reads.py [--before DIR] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FETCH_DELAY_S = 0.2  # a slow page: the wait a parallel run overlaps
CALLS = 5
TREE_FILES = 4_000  # files in the grep case's tree
FILE_LINES = 400  # lines per file: ~24 MB in all, a real project's size


class SlowPage(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        from tests.support.raw_servers import http_response  # the checkout's own (sys.path: one_case)

        time.sleep(FETCH_DELAY_S)
        self.wfile.write(http_response("200 OK", "text/plain", f"page {self.path}\n"))


def make_tree(root: Path) -> None:
    line = "def handler(request): return response  # some ordinary code line\n"
    for i in range(TREE_FILES):
        folder = root / f"pkg{i % 40}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i}.py").write_text(line * FILE_LINES + f"TOKEN_{i % 7} = {i}\n")


def one_case(case: str, runs: int) -> dict[str, list[float]]:
    """In the child: `runs` turns of the case, timed from the events."""
    sys.path.insert(0, os.getcwd())
    from nanohermes.tools.builtin import BUILTIN_TOOLS
    from tests.support.agents import make_agent
    from tests.support.scripted_server import ScriptedServer, calls, text

    tools_s, turn_s = [], []
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as ws:
        os.environ["NANOHERMES_HOME"] = home
        workspace = Path(ws)
        pages = ThreadingHTTPServer(("127.0.0.1", 0), SlowPage)
        threading.Thread(target=pages.serve_forever, daemon=True).start()
        if case == "grep":
            make_tree(workspace)
            pairs = [("grep", {"pattern": f"TOKEN_{i}"}) for i in range(CALLS)]
        else:
            url = f"http://127.0.0.1:{pages.server_address[1]}"
            pairs = [("web_fetch", {"url": f"{url}/page{i}"}) for i in range(CALLS)]
        server = ScriptedServer()
        stamped: list[tuple[float, object]] = []
        agent = make_agent(server, workspace, tools=BUILTIN_TOOLS, mode="auto")
        agent.emit = lambda event: stamped.append((time.perf_counter(), event))
        for run in range(runs + 1):  # the first warms imports (trafilatura, httpx) and the page cache
            server.add(calls(*pairs), text("done"))
            stamped.clear()
            start = time.perf_counter()
            agent.run_turn(f"read them {run}")
            turn = time.perf_counter() - start
            names = [type(e).__name__ for _, e in stamped]
            first = next(t for t, e in stamped if type(e).__name__ == "ToolStarted")
            last = max(t for t, e in stamped if type(e).__name__ == "ToolFinished")
            ok = names.count("ToolFinished") == CALLS and agent.messages[-1]["content"] == "done"
            if not ok:
                raise SystemExit(f"{case}: the turn did not run its {CALLS} calls")
            if run:
                tools_s.append((last - first) * 1000)
                turn_s.append(turn * 1000)
        server.close()
        pages.shutdown()
    return {"tools": tools_s, "turn": turn_s}


def child(root: str, case: str, runs: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": root}
    done = subprocess.run(
        [sys.executable, __file__, "--child", case, "--runs", str(runs)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"{root} {case}: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", help="a checkout of the code to compare with")
    parser.add_argument("--runs", type=int, default=3, help="turns per process (after one warm-up)")
    parser.add_argument("--rounds", type=int, default=3, help="processes per checkout and case, alternating")
    parser.add_argument("--cases", default="web_fetch,grep", help="web_fetch, grep or both")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_case(args.child, args.runs)))
        return
    roots = {"after": str(ROOT)} if not args.before else {"before": args.before, "after": str(ROOT)}
    cases = args.cases.split(",")
    samples = {(label, case, kind): [] for label in roots for case in cases for kind in ("tools", "turn")}
    for _ in range(args.rounds):
        for case in cases:
            for label, root in roots.items():
                for kind, values in child(root, case, args.runs).items():
                    samples[(label, case, kind)] += values
    print(f"{CALLS} calls in one reply; medians (ms) of {args.rounds * args.runs} turns each")
    print(
        f"{'case':<12}{'measure':<8}"
        + "".join(f"{label:>10}" for label in roots)
        + ("   after/before" if args.before else "")
    )
    for case in cases:
        for kind in ("tools", "turn"):
            med = {label: statistics.median(samples[(label, case, kind)]) for label in roots}
            ratio = f"{med['after'] / med['before']:>15.2f}" if args.before else ""
            print(f"{case:<12}{kind:<8}" + "".join(f"{med[label]:>10.0f}" for label in roots) + ratio)


if __name__ == "__main__":
    main()
