"""What a prompt cache can reuse: two trajectories through context policies, side by side.

    .venv/bin/python scripts/bench_cache.py [--windows 8192,32768,65536,131072] [--current PATH]

Each run drives the real `nanohermes -p` of a source tree (this checkout: "new"; `--current
PATH`, a checkout of the previous main: "current") against a window-enforcing, one-slot
prefix-caching server (scripts/cache_sim.py), plus the seed's algorithm as a small in-process
client ("seed"). "new/excerpt" is this checkout with a separate summary model, so summaries
use the rendered excerpt instead of the conversation's prefix.

Trajectories: `read25` (25 files of 18,000 bytes read one at a time, then an answer; and
`read25-36k`, the same with 36,000-byte files, which the peers' 64K measurement used) and
`coding` (the 66-call logkit trajectory of scripts/context_trajectory.py in three user turns,
executed for real in a generated workspace).

Per run: chars sent (every request, summaries included), uncached (chars not a prefix of the
previous request), the floor (every new message once), uncached/floor, main and summary
requests, compactions, the peak prompt as a share of the window, context errors, and the
retention probes checked on every request after a compaction (goal, constraint, files,
latest user message; read25: goal, latest user message, every file read so far).
Targets: uncached/floor ≤ 1.25 at 32K, ≤ 1.20 at 64K, ≤ 1.5 at 8K; summary requests ≤ one per
four main requests; retention 100 %; no context errors; chars sent ≤ 1.3 × current.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from cache_sim import CacheServer, Model, message_text  # noqa: E402
from context_trajectory import CONSTRAINT, build_trajectory, code_file  # noqa: E402
from policies import stand_in_summary  # noqa: E402

from tests.support.scripted_server import Reply  # noqa: E402

READ_FILES, READ_BYTES = 25, 18_000
READ_TASK = (
    f"Goal: find which of the {READ_FILES} modules in src/ define a class named Registry. "
    "Read each file src/f01.py to src/f25.py one at a time, then list the ones that do."
)
GOAL_PHRASE = "read gzip-compressed logs (.log.gz)"
READ_GOAL_PHRASE = "define a class named Registry"


# ---------------------------------------------------------------- trajectories


class ReadFiles(Model):
    def __init__(self, files: int = READ_FILES) -> None:
        self.files, self.done = files, 0

    def main_reply(self, body: dict) -> Reply:
        if self.done < self.files:
            self.done += 1
            return Reply(
                tool_calls=[("read_file", json.dumps({"path": f"src/f{(self.done - 1) % READ_FILES + 1:02d}.py"}))]
            )
        return Reply(content="Registry is defined in src/f07.py and src/f19.py.")

    def summary_reply(self, body: dict) -> Reply:
        return Reply(content=stand_in_summary("", "\n".join(message_text(m) for m in body["messages"])))

    def probes(self, text: str, users: list[str]) -> dict[str, bool]:
        files = [f"f{i:02d}.py" for i in range(1, min(self.done, READ_FILES + 1))]  # the newest read may be in flight
        return {
            "goal": READ_GOAL_PHRASE in text,
            "latest user": users[-1] in text,
            "files": all(f in text for f in files),
        }


def read_workspace(root: Path, size: int) -> None:
    rng = random.Random(7)
    for i in range(1, READ_FILES + 1):
        text = code_file(f"src/f{i:02d}.py", size, rng).split("\n", 1)[1]
        if i in (7, 19):
            text = "class Registry:\n    pass\n" + text
        path = root / "src" / f"f{i:02d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text[:size])


class Coding(Model):
    """The logkit trajectory: each main request gets the next step's calls; a phase ends with
    a short answer (the CLI run ends and the next user message starts the next run)."""

    def __init__(self, phases: list[list[list[tuple[str, dict]]]]):
        self.phases = phases
        self.phase = 0
        self.step = 0
        self.changed: list[str] = []

    def main_reply(self, body: dict) -> Reply:
        steps = self.phases[self.phase]
        if self.step < len(steps):
            calls = steps[self.step]
            for name, args in calls:
                if name in ("edit_file", "write_file") and args["path"] not in self.changed:
                    self.changed.append(args["path"])
            self.step += 1
            return Reply(tool_calls=[(name, json.dumps(args)) for name, args in calls])
        return Reply(content="Done with this part: parse_log() reads .log.gz; tests pass.")

    def next_phase(self) -> None:
        self.phase += 1
        self.step = 0

    def summary_reply(self, body: dict) -> Reply:
        return Reply(content=stand_in_summary("", "\n".join(message_text(m) for m in body["messages"])))

    def probes(self, text: str, users: list[str]) -> dict[str, bool]:
        result = {
            "goal": GOAL_PHRASE in text,
            "latest user": users[-1] in text,
            "files": all(p in text for p in self.changed[:-2]),
        }  # the newest edits may still be in flight
        if CONSTRAINT in users:
            result["constraint"] = CONSTRAINT in text
        return result


def coding_workspace(root: Path) -> tuple[list[str], list[list[list[tuple[str, dict]]]]]:
    """Files, logs and edits so that every call of the trajectory runs for real. Returns the
    user messages and, per phase, the steps (lists of calls)."""
    rng = random.Random(11)
    users: list[str] = []
    phases: list[list[list[tuple[str, dict]]]] = []
    contents: dict[str, str] = {}
    logs = 0
    for event in build_trajectory():
        if event[0] == "user":
            users.append(event[1]["content"])
            phases.append([])
            continue
        calls = []
        for call in event[1].get("tool_calls") or ():
            name, args = call["function"]["name"], json.loads(call["function"]["arguments"])
            if name == "run_command":
                logs += 1
                result = next(r["content"] for r in event[2] if r["tool_call_id"] == call["id"])
                (root / ".logs").mkdir(exist_ok=True)
                (root / ".logs" / f"{logs:02d}.txt").write_text(result.split("\n", 2)[2])
                args = {"command": f"cat .logs/{logs:02d}.txt"}
            elif name in ("read_file", "edit_file"):
                contents.setdefault(
                    args["path"], code_file(args["path"], rng.randint(6_000, 18_000), rng).split("\n", 1)[1]
                )
                if name == "edit_file":
                    contents[args["path"]] += "\n" + args["old_text"]
            calls.append((name, args))
        if calls:
            phases[-1].append(calls)
    for path, text in contents.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text + "\n")
    return users, phases


# ---------------------------------------------------------------- drivers


@dataclass
class Run:
    trajectory: str
    window: int
    policy: str
    completed: bool = True
    wall_s: float = 0.0
    probes: dict[str, list[int]] = field(default_factory=dict)  # probe -> [passed, checked]
    meter: object = None
    session_bytes: int = 0


# Runs `nanohermes` from the source tree in argv[1], whatever checkout the venv's editable
# install points at (its import hook would otherwise win over sys.path).
LAUNCHER = (
    "import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in getattr(f, '__module__', '')]; "
    "sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'nanohermes'; from nanohermes.cli import main; main()"
)


def run_cli(
    src: Path, workspace: Path, home: Path, url: str, prompts: list[str], on_turn, extra_config: str = ""
) -> bool:
    (home / "config.toml").write_text("temperature = 0.0\n" + extra_config)
    env = {**os.environ, "NANOHERMES_HOME": str(home), "NO_COLOR": "1"}
    env.pop("OPENAI_API_KEY", None)
    ok = True
    for i, prompt in enumerate(prompts):
        on_turn(i, prompt)
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                LAUNCHER,
                str(src),
                "-p",
                prompt,
                "--session",
                "bench",
                "--yes",
                "--base-url",
                url,
                "--model",
                "sim",
                "-C",
                str(workspace),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        ok = ok and proc.returncode == 0
        if proc.returncode != 0:
            print(f"    [{src.name}] exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
    return ok


def run_seed(workspace: Path, url: str, prompts: list[str], on_turn) -> bool:
    """The seed's loop and compact_with (120,000 chars, keep 10, a system summary), no overflow
    recovery: a context error ends the run."""
    import openai
    from policies import seed_compact

    from nanohermes.tools import ToolContext, dispatch
    from nanohermes.tools.builtin import BUILTIN_TOOLS

    client = openai.OpenAI(api_key="x", base_url=url, max_retries=0)
    tools = {t.name: t for t in BUILTIN_TOOLS}
    schemas = [t.schema() for t in tools.values()]
    ctx = ToolContext(workspace=workspace, home=workspace.parent / "home")
    messages = [{"role": "system", "content": (ROOT / "nanohermes/prompt/templates/system.md").read_text()}]

    def summarize(system_prompt: str, text: str) -> str:
        response = client.chat.completions.create(
            model="sim",
            messages=[{"role": "system", "content": system_prompt}, {"role": "user", "content": text}],
            max_tokens=800,
        )
        return response.choices[0].message.content or ""

    for i, prompt in enumerate(prompts):
        on_turn(i, prompt)
        messages.append({"role": "user", "content": prompt})
        for _ in range(60):
            messages = seed_compact(messages, summarize) or messages
            try:
                response = client.chat.completions.create(
                    model="sim", messages=messages, tools=schemas, max_tokens=4096
                )
            except openai.BadRequestError:
                return False
            message = response.choices[0].message
            calls = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.function.name, "arguments": c.function.arguments},
                }
                for c in message.tool_calls or ()
            ]
            messages.append(
                {"role": "assistant", "content": message.content or "", **({"tool_calls": calls} if calls else {})}
            )
            if not calls:
                break
            for c in calls:
                result = dispatch(ctx, tools, c["function"]["name"], c["function"]["arguments"])
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": result.content})
    return True


def run_one(trajectory: str, window: int, policy: str, sources: dict[str, Path], advertise: bool = True) -> Run:
    run = Run(trajectory, window, policy)
    with tempfile.TemporaryDirectory() as tmp:
        workspace, home = Path(tmp) / "ws", Path(tmp) / "home"
        workspace.mkdir()
        home.mkdir()
        if trajectory.startswith("read25"):
            read_workspace(workspace, READ_BYTES * (2 if trajectory == "read25-36k" else 1))
            model, prompts = ReadFiles(), [READ_TASK]
        else:
            prompts, phases = coding_workspace(workspace)
            model = Coding(phases)
        sim = CacheServer(model, window, advertise=advertise)
        users: list[str] = []

        def on_turn(i: int, prompt: str) -> None:
            users.append(prompt)
            if i and isinstance(model, Coding):
                model.next_phase()

        def check(body: dict) -> None:
            text = "\n".join(message_text(m) for m in body["messages"])
            for probe, passed in model.probes(text, users).items():
                counts = run.probes.setdefault(probe, [0, 0])
                counts[0] += passed
                counts[1] += 1

        sim.on_compaction = check
        start = time.perf_counter()
        try:
            if policy == "seed":
                run.completed = run_seed(workspace, sim.url, prompts, on_turn)
            else:
                src = sources["current" if policy == "current" else "new"]
                extra = 'summary_model = "sim-summary"\n' if policy == "new/excerpt" else ""
                run.completed = run_cli(src, workspace, home, sim.url, prompts, on_turn, extra)
                session = home / "sessions" / "bench.jsonl"
                run.session_bytes = session.stat().st_size if session.exists() else 0
        finally:
            run.wall_s = time.perf_counter() - start
            sim.close()
        run.meter = sim.meter
    return run


# ---------------------------------------------------------------- report


def row(run: Run, floor: int) -> str:
    """One table row; `floor` is the trajectory's floor at this window, the same for every policy
    (the largest any policy saw: one that trims a fresh result before sending it sees less)."""
    m = run.meter
    ok = [e for e in m.exchanges if not e.rejected]
    main = [e for e in ok if not e.summary]
    summaries = [e for e in ok if e.summary]
    sent = sum(e.chars for e in m.exchanges)
    uncached = sum(e.uncached_chars for e in m.exchanges)
    uncached_tokens = sum(e.prompt_tokens - e.cached_tokens for e in m.exchanges)
    errors = sum(e.rejected for e in m.exchanges)
    probes = " ".join(f"{k} {p}/{n}" for k, (p, n) in sorted(run.probes.items())) or "-"
    retention = all(p == n for p, n in run.probes.values())
    return (
        f"| {run.trajectory} | {run.window // 1024}K | {run.policy} | {len(main)} | {len(summaries)} "
        f"| {sum(e.compacted for e in main)} | {sent:,} | {uncached:,} | {floor:,} | {uncached / max(1, floor):.2f} "
        f"| {uncached_tokens:,} | {100 * m.peak_prompt_tokens / m.window:.0f} % | {errors} "
        f"| {'100 %' if retention else 'MISSED'} ({probes}) | {'yes' if run.completed else 'NO'} |"
    )


HEADER = (
    "| trajectory | window | policy | main req | summary req | compactions | chars sent | uncached chars "
    "| floor | uncached/floor | uncached tokens | peak | context errors | retention | finished |\n"
    "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--windows", default="8192,32768,65536,131072")
    parser.add_argument("--trajectories", default="read25,read25-36k,coding")
    parser.add_argument("--policies", default="seed,current,new,new/excerpt")
    parser.add_argument("--current", type=Path, help="a checkout of the previous main (for the 'current' policy)")
    parser.add_argument(
        "--unadvertised", action="store_true", help="also run 128K without advertising the window (default budget)"
    )
    args = parser.parse_args()
    sources = {"new": ROOT, "current": args.current}
    policies = [p for p in args.policies.split(",") if p != "current" or args.current]
    print(HEADER, flush=True)
    for trajectory in args.trajectories.split(","):
        groups = [(w, True) for w in map(int, args.windows.split(","))] + (
            [(131072, False)] if args.unadvertised else []
        )
        for window, advertise in groups:
            if trajectory == "read25-36k" and window < 65536:
                continue  # a 36 KB file is clamped to the same 3.7-14.7 KB as an 18 KB one there
            runs = [run_one(trajectory, window, policy, sources, advertise=advertise) for policy in policies]
            floor = max(r.meter.floor_chars for r in runs if r.completed) if any(r.completed for r in runs) else 1
            for run in runs:
                run.policy += "" if advertise else " (unadvertised)"
                print(row(run, floor), flush=True)


if __name__ == "__main__":
    main()
