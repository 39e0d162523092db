#!/usr/bin/env python3
"""aider's benchmark, side by side: the 133 Exercism Python exercises of aider's original code-editing benchmark,
two tries with the test output fed back (scripts/aider_protocol.py), NanoHermes and aider on the same server.

    # once: export the pinned commit of exercism/python (the search tool's fetch gives a git directory)
    .venv/bin/python scripts/bench_aider133.py prepare --git /work/.mirror/exercism+python/repo --out /work/aider133
    # a local OpenAI-compatible server on :8091 (../shared/local-llm/serve.sh), then the fixed 40 or all 133:
    .venv/bin/python scripts/bench_aider133.py run --exercises /work/aider133 --subset
    .venv/bin/python scripts/bench_aider133.py run --exercises /work/aider133 --agents nanohermes --coach small
    .venv/bin/python scripts/bench_aider133.py table /tmp/bench-aider133/results-….json

Which 133. aider's post "GPT code editing benchmarks" (2023-07-02) and its leaderboard (`test_cases: 133`, also
for the Qwen2.5-Coder 0.5B–7B rows of 2024-10/11) use "133 practice exercises from the Exercism python
repository": its benchmark.py copies exercises/practice of a clone (README: `cp -rp python/exercises/practice`)
and runs every folder in it. exercism/python had 133 practice folders from 2022-12 until resistor-color-expert
landed on 2023-06-15 (134 from then on); aider's benchmark code was begun on 2023-06-23, so its clone predates
that landing. PINNED_COMMIT is the last state main had with 133: 7aef5e9 (committed 2023-06-07, main until
2023-06-15). The names' digest is checked on export.

Per exercise and agent: a fresh directory with the solution stub alone (the model never sees the tests), a
fresh home (but for `coach = auto`'s kept signs of the model, carried from one exercise to the next as a
user's home keeps them: --profile), the first message (instructions + aider's addendum); after each try the original tests run in a
judge directory (aider's unittest command); failing, the next try gets their first 50 lines and aider's
"The tests are correct" note. NanoHermes's second try is `-p` in the same session; aider's runs in one process
(aider_protocol_driver.py, with aider's own Python). Tokens are counted by scripts/usage_proxy.py for both.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import aider_protocol as protocol
import exercism_agents as agents
from usage_proxy import UsageProxy

DEFAULT_OUT = Path(tempfile.gettempdir()) / "bench-aider133"
AIDER_EDIT_FORMAT = "whole"  # the edit format of aider's Qwen2.5-Coder rows
REPLY_WAIT_S = 600  # seconds without a byte of a reply before it is given up: litellm's default, which aider keeps
PROFILE = "coach.json"
PROXY_PORT = 8092  # auto keeps a model's signs by base URL and model: a fixed port keeps the key across stretches  # where `coach = auto` keeps the model's signs in NANOHERMES_HOME (loop/coach/choice.py)


def prepare(git_dir: Path, out: Path) -> None:
    """Export exercises/practice of PINNED_COMMIT into `out`, and check it is the 133 aider ran."""
    archive = subprocess.run(
        ["git", "--git-dir", str(git_dir), "archive", "--format=tar", protocol.PINNED_COMMIT, "exercises/practice"],
        capture_output=True,
        check=True,
    ).stdout
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as tmp:
        tmp.write(archive)
        tmp.seek(0)
        with tarfile.open(fileobj=tmp) as tar:
            tar.extractall(out, filter="data")
    names = exercise_names(out)
    if len(names) != protocol.EXERCISE_COUNT or protocol.names_digest(names) != protocol.NAMES_SHA256:
        raise SystemExit(f"{out}: {len(names)} exercises, not the {protocol.EXERCISE_COUNT} pinned ones")
    (out / "COMMIT").write_text(protocol.PINNED_COMMIT + "\n")
    print(f"exported exercism/python @ {protocol.PINNED_COMMIT[:12]}: {len(names)} exercises in {out}")


def exercise_names(track: Path) -> list[str]:
    return sorted(p.name for p in (track / "exercises" / "practice").iterdir() if p.is_dir())


def chosen(args: argparse.Namespace) -> list[str]:
    names = exercise_names(args.exercises)
    if protocol.names_digest(names) != protocol.NAMES_SHA256:
        raise SystemExit(f"{args.exercises} is not the pinned export: run `prepare` first")
    picked = protocol.subset(names) if args.subset else names
    if args.only:
        picked = [n for n in picked if n in args.only.split(",")]
    return picked[: args.limit] if args.limit else picked


def fresh_workdir(exercise: Path) -> Path:
    """A short neutral path holding the solution stub(s) alone."""
    workdir = Path(tempfile.mkdtemp(prefix="ex_")) / "work"
    workdir.mkdir()
    for name in protocol.solution_files(exercise):
        shutil.copy(exercise / name, workdir / name)
    return workdir


def run_nanohermes(args, proxy: UsageProxy, exercise: Path, out: Path) -> list[dict]:
    """Both tries: the first message, then (failing) the test output, `-p` in one session."""
    workdir, home = fresh_workdir(exercise), out / "home"
    home.mkdir(parents=True)
    env = agents.agent_env(home, Path(sys.executable).parent)
    profile = Path(env["NANOHERMES_HOME"]) / PROFILE
    profile.parent.mkdir(parents=True, exist_ok=True)
    # a reply's wait as aider's (litellm's 600 s), not -p's 150 s: a loaded CPU takes minutes over a long prompt
    (profile.parent / "config.toml").write_text(f"request_timeout = {REPLY_WAIT_S}\n")
    if args.profile.exists():  # auto's signs of the model so far, as a user's home keeps them
        shutil.copy(args.profile, profile)
    message, tries = protocol.first_message(exercise), []
    for n in range(1, protocol.TRIES + 1):
        command = [
            args.nanohermes, "-p", message, "--yes", "--session", "bench", "--coach", args.coach,
            "--base-url", proxy.base_url, "--model", args.model, "--output-format", "json",
        ]  # fmt: skip
        proxy.take()
        ran = agents.run_agent(command, workdir, env, args.timeout, out / f"try{n}.log")
        proxy.settle(args.model)  # a killed run's request must not hold the server's one slot
        errors = protocol.run_tests(exercise, workdir, out / f"judge{n}")
        tries.append(_try(ran.seconds, ran.timed_out, errors is None, proxy.take(), ran.details))
        if errors is None:
            break
        message = protocol.next_message(errors, exercise)
    if profile.exists():
        shutil.copy(profile, args.profile)
        tries[-1]["coach_signs"] = profile.read_text()  # what auto will decide by next (GOOD "+", BAD "-")
    shutil.move(workdir, out / "work")
    shutil.rmtree(workdir.parent, ignore_errors=True)  # what an agent left beside it (a cache)
    return tries


def run_aider(args, proxy: UsageProxy, exercise: Path, out: Path) -> list[dict]:
    """Both tries in aider's own process (aider_protocol_driver.py); the proxy's count covers both."""
    workdir, home = fresh_workdir(exercise), out / "home"
    home.mkdir(parents=True)
    metadata = home / "aider-models.json"
    limits = {"max_input_tokens": agents.AIDER_CONTEXT_TOKENS, "max_tokens": agents.AIDER_CONTEXT_TOKENS}
    limits |= {"max_output_tokens": agents.AIDER_MAX_OUTPUT_TOKENS, "input_cost_per_token": 0}
    limits |= {"output_cost_per_token": 0, "litellm_provider": "openai", "mode": "chat"}
    metadata.write_text(json.dumps({f"openai/{args.model}": limits}))
    driver = Path(__file__).resolve().parent / "aider_protocol_driver.py"
    command = [args.aider_python, str(driver), str(exercise), str(workdir), str(out / "judge"), args.model]
    command += [proxy.base_url, str(metadata), AIDER_EDIT_FORMAT]
    env = agents.agent_env(home, Path(sys.executable).parent)
    proxy.take()
    ran = agents.run_agent(command, workdir, env, args.timeout * protocol.TRIES, out / "aider.log")
    proxy.settle(args.model)
    report = _last_json(out / "aider.log")
    outcomes = report.get("outcomes") or [False]
    tally = proxy.take()
    shutil.move(workdir, out / "work")
    shutil.rmtree(workdir.parent, ignore_errors=True)  # what an agent left beside it (a cache)
    tries = [_try(s, ran.timed_out, ok, None, {}) for s, ok in zip(report.get("seconds") or [ran.seconds], outcomes)]
    tries[-1]["usage"] = _usage(tally)  # aider's two tries share one count
    return tries


def _try(seconds: float, timed_out: bool, passed: bool, tally, details: dict) -> dict:
    return {"seconds": round(seconds, 1), "timed_out": timed_out, "pass": passed,
            "usage": _usage(tally) if tally else _usage(None), "agent_report": details}  # fmt: skip


def _usage(tally) -> dict:
    keys = ("requests", "prompt_tokens", "completion_tokens", "evaluated_tokens", "unreported")
    return {k: getattr(tally, k, 0) if tally else 0 for k in keys}


def _last_json(log: Path) -> dict:
    for line in reversed(log.read_text(errors="replace").splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return {}


def row(name: str, agent: str, coach: str, tries: list[dict], out: Path) -> dict:
    usage = {k: sum(t["usage"][k] for t in tries) for k in tries[0]["usage"]}
    return {
        "exercise": name, "agent": agent, "coach": coach if agent == "nanohermes" else "",
        "pass1": tries[0]["pass"], "pass2": any(t["pass"] for t in tries[: protocol.TRIES]),
        "tries": tries, "seconds": round(sum(t["seconds"] for t in tries), 1), **usage,
        "timed_out": any(t["timed_out"] for t in tries), "dir": str(out),
    }  # fmt: skip


def summary(rows: list[dict]) -> str:
    """Per agent (and coach): pass@1, pass@2, and per exercise solved (pass@2) the tokens sent and evaluated,
    the requests and the seconds — all the runs' totals over the solved count —, and tokens sent, tokens
    evaluated and requests per exercise run (what a row that solved none still tells). Only the exercises every
    agent ran count (a stretch that stopped between two agents' runs of one exercise): the same exercises."""
    lines = [
        "| agent | exercises | pass@1 | pass@2 | sent / solved | evaluated / solved | requests / solved | s / solved "
        "| sent / exercise | evaluated / exercise | requests / exercise |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["agent"] + (f" ({r['coach']})" if r["coach"] else ""), []).append(r)
    common = set.intersection(*({r["exercise"] for r in rs} for rs in groups.values())) if groups else set()
    groups = {label: [r for r in rs if r["exercise"] in common] for label, rs in groups.items()}
    for label, rs in sorted(groups.items()):
        n, solved = len(rs), sum(r["pass2"] for r in rs)
        if not n:
            continue

        def per(key: str, rs=rs, solved=solved) -> str:
            return f"{sum(r[key] for r in rs) / solved:,.0f}" if solved else "–"

        def each(key: str, rs=rs, n=n) -> float:
            return sum(r[key] for r in rs) / n

        p1 = 100 * sum(r["pass1"] for r in rs) / n
        lines.append(
            f"| {label} | {n} | {p1:.1f} % | {100 * solved / n:.1f} % | {per('prompt_tokens')} | "
            f"{per('evaluated_tokens')} | {per('requests')} | {per('seconds')} | "
            f"{each('prompt_tokens'):,.0f} | {each('evaluated_tokens'):,.0f} | {each('requests'):.1f} |"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> None:
    names = chosen(args)
    stamp = args.resume.stem.removeprefix("results-") if args.resume else time.strftime("%Y%m%d-%H%M%S")
    root, results_path = args.out / f"run-{stamp}", args.out / f"results-{stamp}.json"
    rows: list[dict] = []
    args.profile = args.profile or root.parent / f"coach-{stamp}.json"
    if args.resume:  # a stretch that stopped goes on where it stopped, into the same file
        results_path, rows = args.resume, json.loads(args.resume.read_text())["results"]
        root = Path(rows[0]["dir"]).parents[1] if rows else root
    done = {(r["exercise"], r["agent"], r["coach"]) for r in rows}
    with UsageProxy(args.base_url, args.proxy_port) as proxy:
        proxy.settle(args.model)
        for i, name in enumerate(names, 1):
            exercise = args.exercises / "exercises" / "practice" / name
            for agent in args.agents.split(","):
                coach = args.coach if agent == "nanohermes" else ""
                if (name, agent, coach) in done:
                    continue
                out = root / name / (agent if agent != "nanohermes" or args.coach == "auto" else f"{agent}-{coach}")
                shutil.rmtree(out, ignore_errors=True)  # what a stopped stretch left of it
                runner = run_nanohermes if agent == "nanohermes" else run_aider
                rows.append(row(name, agent, args.coach, runner(args, proxy, exercise, out), out))
                results_path.write_text(json.dumps({"args": vars(args), "results": rows}, indent=1, default=str))
                r = rows[-1]
                print(f"[{i}/{len(names)}] {name} {agent}: pass@1 {r['pass1']} pass@2 {r['pass2']} "
                      f"{r['prompt_tokens']} sent, {r['requests']} requests, {r['seconds']:.0f} s", flush=True)  # fmt: skip
    print(f"\nraw results: {results_path}\n\n{summary(rows)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="export the pinned commit's practice exercises")
    p.add_argument("--git", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("run", help="run the agents under aider's protocol")
    r.add_argument("--exercises", type=Path, required=True, help="the `prepare` export")
    r.add_argument(
        "--subset", action="store_true", help=f"the fixed {protocol.SUBSET_SIZE} (seed {protocol.SUBSET_SEED})"
    )
    r.add_argument("--only", default="", help="comma-separated exercise names")
    r.add_argument("--limit", type=int, default=0)
    r.add_argument("--agents", default="nanohermes,aider")
    r.add_argument("--coach", default="auto", choices=["auto", "plain", "small"], help="NanoHermes's --coach")
    r.add_argument("--timeout", type=float, default=600, help="seconds per try (default 600)")
    r.add_argument("--base-url", default="http://127.0.0.1:8091/v1")
    r.add_argument("--model", default="local-model")
    r.add_argument("--nanohermes", default=agents.default_nanohermes())
    r.add_argument("--aider-python", default=os.environ.get("AIDER_PYTHON", "/work/aider-venv/bin/python"))
    r.add_argument("--out", type=Path, default=DEFAULT_OUT)
    r.add_argument(
        "--profile",
        type=Path,
        help="auto's kept signs (coach.json) carried from exercise to exercise (default: one per run)",
    )
    r.add_argument(
        "--proxy-port",
        type=int,
        default=PROXY_PORT,
        help="the counting proxy's port: one port, one base URL, so auto's kept signs carry over a --resume",
    )
    r.add_argument("--resume", type=Path, help="a results file of a stretch that stopped: go on with it")
    t = sub.add_parser("table", help="the summary of one or more results files")
    t.add_argument("results", type=Path, nargs="+")
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.git, args.out)
    elif args.command == "run":
        run(args)
    else:
        print(summary([row for path in args.results for row in json.loads(path.read_text())["results"]]))


if __name__ == "__main__":
    main()
