#!/usr/bin/env python3
"""Coding agents on Exercism's Python track, judged by the exercises' own tests.

    # once: export the track from a git directory (e.g. the search tool's fetch of exercism/python)
    .venv/bin/python scripts/bench_exercism.py prepare --git /work/.mirror/exercism+python/repo --out /work/exercism-python
    # a local OpenAI-compatible server on :8091 (on a shared machine give it priority; with the kernel's
    # autogroup scheduling, /proc/sys/kernel/sched_autogroup_enabled = 1, `nice` alone does nothing against
    # other sessions' processes: raise the server's session group too, `echo -10 > /proc/SERVER_PID/autogroup`), then
    .venv/bin/python scripts/bench_exercism.py run --exercises /work/exercism-python --set heldout
    .venv/bin/python scripts/bench_exercism.py table /tmp/bench-exercism/results-….json

Per exercise and agent: a fresh directory with NAME.py (the stub), NAME_test.py and INSTRUCTIONS.md
(.docs/instructions.md + instructions.append.md); one task text (TASK) for every agent; the agent runs
to its end or the timeout; then the *original* tests, copied fresh beside the agent's NAME.py, judge it.
Tokens are counted by scripts/usage_proxy.py from the server's replies, the same way for both agents.
No exercise text lives in this repository: it is read from the directory given at run time.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the helpers beside this script
import exercism_agents as agents
import exercism_report as report
from usage_proxy import UsageProxy

TASK = (
    "Use the instructions in INSTRUCTIONS.md to modify {solution} so that it passes {test}. "
    "Do not change the tests. Keep the names of the existing functions and classes, "
    "and use only the standard library."
)
# The selection rule, fixed before any exercise was read: active practice exercises of difficulty 1–3,
# per difficulty sorted by slug and shuffled with SELECTION_SEED, then dealt round-robin 1, 2, 3, 1, 2, 3 …
# The first HELD_OUT_PER_DIFFICULTY of each difficulty are held out (nobody tunes to them, nobody reads
# them), the next DEV_PER_DIFFICULTY are the dev set the team may look at. Round-robin order means any
# prefix of either list (--limit) is still a spread of difficulties.
SELECTION_SEED = 24  # the number
MAX_DIFFICULTY = 3
HELD_OUT_PER_DIFFICULTY = 5  # 15 held out: ~enough to tell 2 agents apart, and a CPU model's evening
DEV_PER_DIFFICULTY = 3
# What the rule gave on exercism/python at 9eb657d45 (`selection` re-derives it from a checkout and says if
# it differs). The lists are the contract: a changed track must not silently change what is measured.
HELD_OUT = [
    "line-up", "word-count", "state-of-tic-tac-toe", "leap", "twelve-days",
    "allergies", "isogram", "luhn", "wordy", "resistor-color-trio",
    "robot-name", "kindergarten-garden", "flatten-array", "queen-attack", "grade-school",
]  # fmt: skip
DEV = [
    "reverse-string", "acronym", "crypto-square", "secret-handshake", "transpose",
    "ocr-numbers", "sum-of-multiples", "phone-number", "simple-cipher",
]  # fmt: skip
JUDGE_TIMEOUT_S = 120  # the exercises' tests run in well under a second; an endless loop must not hang the bench
DEFAULT_OUT = Path(tempfile.gettempdir()) / "bench-exercism"


def select(config: dict) -> tuple[list[str], list[str]]:
    """(held-out, dev) slugs by the rule above, from the track's config.json."""
    by_difficulty: dict[int, list[str]] = {}
    for ex in config["exercises"]["practice"]:
        if ex.get("status") != "deprecated" and ex["difficulty"] <= MAX_DIFFICULTY:
            by_difficulty.setdefault(ex["difficulty"], []).append(ex["slug"])
    rng = random.Random(SELECTION_SEED)
    shuffled = {}
    for difficulty in sorted(by_difficulty):
        slugs = sorted(by_difficulty[difficulty])
        rng.shuffle(slugs)
        shuffled[difficulty] = slugs
    held = HELD_OUT_PER_DIFFICULTY

    def deal(start: int, count: int) -> list[str]:
        return [shuffled[d][start + i] for i in range(count) for d in sorted(shuffled) if start + i < len(shuffled[d])]

    return deal(0, held), deal(held, DEV_PER_DIFFICULTY)


def prepare(git_dir: Path, out: Path) -> None:
    """Export config.json and exercises/practice of the git directory's HEAD into `out` (no work tree needed)."""
    out.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "--git-dir", str(git_dir), "archive", "--format=tar", "HEAD", "config.json", "exercises/practice"],
        capture_output=True,
        check=True,
    ).stdout
    with tempfile.TemporaryFile() as tmp:
        tmp.write(archive)
        tmp.seek(0)
        with tarfile.open(fileobj=tmp) as tar:
            tar.extractall(out, filter="data")
    head = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"], capture_output=True, text=True)
    (out / "COMMIT").write_text(head.stdout)
    print(f"exported {git_dir} @ {head.stdout.strip()[:12]} to {out}")


def exercise_files(track: Path, slug: str) -> dict:
    """Names and texts of one exercise: solution stub, tests, the instructions joined."""
    root = track / "exercises" / "practice" / slug
    meta = json.loads((root / ".meta" / "config.json").read_text())
    [solution], [test] = meta["files"]["solution"], meta["files"]["test"]
    docs = [root / ".docs" / "instructions.md", root / ".docs" / "instructions.append.md"]
    instructions = "\n\n".join(p.read_text().strip() for p in docs if p.exists()) + "\n"
    return {"root": root, "solution": solution, "test": test, "instructions": instructions}


def lay_out(ex: dict, workdir: Path) -> None:
    workdir.mkdir(parents=True)
    shutil.copy(ex["root"] / ex["solution"], workdir / ex["solution"])
    shutil.copy(ex["root"] / ex["test"], workdir / ex["test"])
    (workdir / "INSTRUCTIONS.md").write_text(ex["instructions"])


def judge(ex: dict, solution: Path, judge_dir: Path) -> dict:
    """Run the original tests against `solution` in a fresh directory: passed, total, how it ended."""
    judge_dir.mkdir(parents=True)
    shutil.copy(ex["root"] / ex["test"], judge_dir / ex["test"])
    if solution.exists():
        shutil.copy(solution, judge_dir / ex["solution"])
    junit = judge_dir / "junit.xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", ex["test"]]
    try:
        done = subprocess.run(cmd, cwd=judge_dir, capture_output=True, text=True, timeout=JUDGE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"passed": 0, "outcome": "tests timed out"}
    counts = report.junit_counts(junit) if junit.exists() else {"tests": 0, "failed": 0}
    passed = counts["tests"] - counts["failed"]
    tail = done.stdout.strip().splitlines()[-1:] or [""]
    return {"passed": passed, "outcome": tail[0][:200]}


def run_one(args: argparse.Namespace, proxy: UsageProxy, ex: dict, total: int, agent: str, root: Path) -> dict:
    slug_dir = root / ex["slug"] / agent
    # The agent works in a short neutral path (no slug, no agent name for a small model to copy or misspell);
    # the directory is moved beside its logs afterwards.
    workdir, home = Path(tempfile.mkdtemp(prefix="ex_")) / "work", slug_dir / "home"
    lay_out(ex, workdir)
    home.mkdir(parents=True)
    task = TASK.format(solution=ex["solution"], test=ex["test"])
    env = agents.agent_env(home, Path(sys.executable).parent)
    if agent == "nanohermes":
        cmd = agents.nanohermes_command(args.nanohermes, task, proxy.base_url, args.model, ex["test"])
        if args.auto_test:
            agents.nanohermes_auto_test(home, ex["test"])
    else:
        names = {
            "solution": ex["solution"],
            "test": ex["test"],
            "instructions": "INSTRUCTIONS.md",
            "workdir": str(workdir),
        }
        cmd = agents.aider_command(args.aider, task, proxy.base_url, args.model, names, home)
    proxy.take()
    load_before = os.getloadavg()[0]  # recorded with the row: on a shared machine others' load slows a CPU server
    ran = agents.run_agent(cmd, workdir, env, args.timeout, slug_dir / "agent.log")
    proxy.settle(args.model)  # a killed agent's request must not hold the server's one slot for the next run
    tally = proxy.take()
    verdict = judge(ex, workdir / ex["solution"], slug_dir / "judge")
    shutil.move(workdir, slug_dir / "work")
    workdir.parent.rmdir()
    return {
        "exercise": ex["slug"], "difficulty": ex["difficulty"], "agent": agent, "set": ex["set"],
        "pass": verdict["passed"] == total and total > 0, "passed": verdict["passed"], "total": total,
        "seconds": round(ran.seconds, 1), "timed_out": ran.timed_out, "exit_code": ran.exit_code,
        "requests": tally.requests, "prompt_tokens": tally.prompt_tokens,
        "completion_tokens": tally.completion_tokens, "evaluated_tokens": tally.evaluated_tokens,
        "unreported": tally.unreported, "load": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "judge": verdict["outcome"], "agent_report": ran.details,
        "dir": str(slug_dir),
    }  # fmt: skip


def count_tests(ex: dict, root: Path) -> int:
    """How many tests the exercise has: the original tests run against the untouched stub."""
    baseline = judge(ex, ex["root"] / ex["solution"], root / ex["slug"] / "stub-judge")
    counts = report.junit_counts(root / ex["slug"] / "stub-judge" / "junit.xml")
    if counts["tests"] == 0:
        raise SystemExit(f"{ex['slug']}: the stub's test run collected no tests ({baseline['outcome']})")
    return counts["tests"]


def chosen(args: argparse.Namespace, track: Path) -> list[dict]:
    config = json.loads((track / "config.json").read_text())
    difficulty = {e["slug"]: e["difficulty"] for e in config["exercises"]["practice"]}
    sets = {"heldout": [("heldout", s) for s in HELD_OUT], "dev": [("dev", s) for s in DEV]}
    picked = sets["heldout"] + sets["dev"] if args.set == "all" else sets[args.set]
    if args.only:
        picked = [(name, s) for name, s in picked if s in args.only.split(",")]
    picked = picked[: args.limit] if args.limit else picked
    return [{**exercise_files(track, s), "slug": s, "set": name, "difficulty": difficulty[s]} for name, s in picked]


def run(args: argparse.Namespace) -> None:
    track = args.exercises
    if not (track / "config.json").exists():
        raise SystemExit(f"{track} has no config.json: give a checkout of exercism/python (see `prepare`)")
    if importlib.util.find_spec("pytest") is None:
        raise SystemExit(f"the judge runs the tests with pytest, which {sys.executable} lacks: pip install pytest")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    root = args.out / f"run-{stamp}"
    results_path = args.out / f"results-{stamp}.json"
    exercises = chosen(args, track)
    agent_names = args.agents.split(",")
    results: list[dict] = []
    with UsageProxy(args.base_url) as proxy:
        proxy.settle(args.model)  # a request left by something before this run must not eat the first timeout
        for i, ex in enumerate(exercises, 1):
            total = count_tests(ex, root)
            for agent in agent_names:
                row = run_one(args, proxy, ex, total, agent, root)
                results.append(row)
                results_path.write_text(
                    json.dumps({"task": TASK, "args": vars(args), "results": results}, indent=1, default=str)
                )
                print(f"[{i}/{len(exercises)}] {report.row_line(row)}", flush=True)
    print(f"\nraw results: {results_path}\nper-exercise directories: {root}\n")
    print(report.render(results))


def in_list_order(rows: list[dict]) -> list[dict]:
    """Rows as the sets list their exercises (results joined from several runs come out in one order)."""
    order = {slug: i for i, slug in enumerate(HELD_OUT + DEV)}
    return sorted(rows, key=lambda r: (r["set"] != "heldout", order.get(r["exercise"], len(order)), r["agent"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="export the track from a git directory")
    p.add_argument("--git", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("selection", help="re-derive the held-out and dev lists from a checkout's config.json")
    s.add_argument("--exercises", type=Path, required=True)
    r = sub.add_parser("run", help="run the agents and judge them")
    r.add_argument("--exercises", type=Path, required=True, help="a checkout (or `prepare` export) of exercism/python")
    r.add_argument("--set", choices=["heldout", "dev", "all"], default="heldout")
    r.add_argument("--limit", type=int, default=0, help="only the first N exercises of the set (a spread still)")
    r.add_argument("--only", default="", help="comma-separated slugs of the set")
    r.add_argument("--agents", default="nanohermes,aider")
    r.add_argument("--timeout", type=float, default=600, help="seconds per agent run (default 600)")
    r.add_argument("--base-url", default="http://127.0.0.1:8091/v1")
    r.add_argument("--model", default="local-model")
    r.add_argument("--nanohermes", default=agents.default_nanohermes())
    r.add_argument(
        "--no-auto-test",
        dest="auto_test",
        action="store_false",
        help="NanoHermes without the PostToolUse hook that runs the tests after each edit (aider keeps --auto-test)",
    )
    r.add_argument("--aider", default="/work/aider-venv/bin/aider")
    r.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where results and work directories go")
    t = sub.add_parser("table", help="print the table and summaries of a results JSON")
    t.add_argument("results", type=Path, nargs="+", help="one or more results files (rows are joined)")
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.git, args.out)
    elif args.command == "selection":
        held, dev = select(json.loads((args.exercises / "config.json").read_text()))
        print("held-out:", held, "\ndev:", dev)
        same = held == HELD_OUT and dev == DEV
        print("same as the lists in this script" if same else "DIFFERS from the lists in this script")
    elif args.command == "run":
        run(args)
    else:
        rows = [row for path in args.results for row in json.loads(path.read_text())["results"]]
        print(report.render(in_list_order(rows)))


if __name__ == "__main__":
    main()
