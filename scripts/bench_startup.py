"""Start-up cost, measured side by side in one run (medians; the machine is shared and noisy).

  python -c pass                       the floor: the same venv's bare interpreter
  nanohermes --version                 target ≤ 2× the floor's CPU
  nanohermes -p: CPU at the first      target ≤ 400 ms: the CPU the process has used when its first
  request byte                         request (GET /models) reaches the server; also at the chat
                                       request, and the whole run's
  REPL prompt ready                    target ≤ 300 ms: from the start until the first prompt is
                                       drawn and its cursor shown, in a real pty (pexpect)
  REPL first turn                      "hi" sent at once at that prompt until the answer is on
                                       screen (what the start-up left for later is paid here)
CPU time is shown beside wall time: on a loaded machine it is the steadier figure.
  nanohermes -p against a local server vs a bare Python script making the same single
  openai request                       target ≤ 1.2×

`--before DIR` also measures the `nanohermes` of another venv's bin directory (e.g. one with
main installed), interleaved with this one, for a before/after in one run.

Usage: python scripts/bench_startup.py [--runs N] [--before VENV/bin]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.support.scripted_server import ScriptedServer, text  # noqa: E402

BIN = Path(sys.executable).parent
BARE = """
import sys, openai
client = openai.OpenAI(api_key="x", base_url=sys.argv[1], max_retries=0)
stream = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
    stream=True, stream_options={"include_usage": True}, max_tokens=100)
print("".join(c.choices[0].delta.content or "" for c in stream if c.choices))
"""
ANSWER = "hello from the scripted server"
VERSION_CPU_TARGET = 2.0  # × the bare interpreter's CPU
FIRST_REQUEST_CPU_TARGET_MS = 400
PROMPT_READY_TARGET_MS = 300
PTY_SIZE = (30, 100)


def timed(cmd: list[str], env: dict, cwd: str) -> tuple[float, float]:
    """(wall ms, CPU ms) of one run: CPU is what a loaded machine cannot inflate the way it inflates wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000


def cpu_ms(pid: int) -> float:
    """The CPU time a running process has used so far (user + system, all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


class RequestClock:
    """The CPU a `-p` run has used when each of its requests reaches the server (read from /proc
    by the server's thread while the client waits for the answer)."""

    def __init__(self, server: ScriptedServer):
        self.pid = 0
        self.seen: dict[str, float] = {}
        listing = {"object": "list", "data": [{"id": "m", "object": "model"}]}

        def models(body):
            self.note("first")
            return 200, listing

        def chat(body):
            self.note("first")
            self.note("chat")
            return text(ANSWER)

        server.routes["GET /v1/models"] = models
        server.handler = chat

    def note(self, what: str) -> None:
        if self.pid and what not in self.seen:  # a -p run being timed (the other cases ask too)
            self.seen[what] = cpu_ms(self.pid)

    def run(self, cmd: list[str], env: dict, cwd: str) -> tuple[float, float, float]:
        """(CPU ms at the first request, at the chat request, the whole run's)."""
        self.seen = {}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        child = subprocess.Popen(cmd, env=env, cwd=cwd, **quiet)
        self.pid = child.pid
        failed = child.wait() != 0
        self.pid = 0
        if failed:
            raise SystemExit(f"{cmd} failed")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        total = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
        return self.seen["first"], self.seen["chat"], total


def repl_times(cmd: list[str], env: dict, cwd: str) -> tuple[float, float, float]:
    """(ms until the first prompt is ready, its CPU ms, ms from sending "hi" until the answer shows)."""
    import pexpect

    pty_env = {**env, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1"}
    start = time.perf_counter()
    child = pexpect.spawn(cmd[0], cmd[1:], cwd=cwd, env=pty_env, encoding="utf-8", timeout=30, dimensions=PTY_SIZE)
    child.expect("›")
    child.expect(r"\x1b\[\?25h")  # the cursor shown again: the prompt takes keys
    ready = (time.perf_counter() - start) * 1000
    cpu = cpu_ms(child.pid)
    start = time.perf_counter()
    child.send("hi\r")
    child.expect(ANSWER)
    first = (time.perf_counter() - start) * 1000
    child.expect("›")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    return ready, cpu, first


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--before", type=Path, help="another venv's bin directory, measured beside this one")
    args = parser.parse_args()
    server = ScriptedServer()
    clock = RequestClock(server)
    bins = {"": BIN, "before ": args.before} if args.before else {"": BIN}
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as ws:
        env = {**os.environ, "NANOHERMES_HOME": home, "OPENAI_API_KEY": "x"}
        cases = {"python -c pass": [sys.executable, "-c", "pass"]}
        for label, bin_dir in bins.items():
            cases[f"{label}nanohermes --version"] = [str(bin_dir / "nanohermes"), "--version"]
        cases["bare openai script (one request)"] = [sys.executable, "-c", BARE, server.url]
        wall: dict[str, list[float]] = {name: [] for name in cases}
        cpu: dict[str, list[float]] = {name: [] for name in cases}
        for label in bins:
            for what in ("first request", "chat request", "whole run"):
                cpu[f"{label}nanohermes -p: CPU at {what}"] = []
            wall[f"{label}REPL prompt ready"], cpu[f"{label}REPL prompt ready"] = [], []
            wall[f"{label}REPL first turn"] = []
        for _ in range(args.runs):  # interleaved, so load spikes hit every case alike
            for name, cmd in cases.items():
                ms, cpu_used = timed(cmd, env, ws)
                wall[name].append(ms)
                cpu[name].append(cpu_used)
            for label, bin_dir in bins.items():
                one_shot = [str(bin_dir / "nanohermes"), "-p", "hi", "--base-url", server.url, "--model", "m"]
                for what, used in zip(("first request", "chat request", "whole run"), clock.run(one_shot, env, ws)):
                    cpu[f"{label}nanohermes -p: CPU at {what}"].append(used)
            for label, bin_dir in bins.items():
                repl = [str(bin_dir / "nanohermes"), "--base-url", server.url, "--model", "m"]
                ready, cpu_used, first = repl_times(repl, env, ws)
                wall[f"{label}REPL prompt ready"].append(ready)
                cpu[f"{label}REPL prompt ready"].append(cpu_used)
                wall[f"{label}REPL first turn"].append(first)
    server.close()
    report(wall, cpu, bins)


def report(wall: dict[str, list[float]], cpu: dict[str, list[float]], bins: dict) -> None:
    med = {name: statistics.median(v) for name, v in wall.items()}
    med_cpu = {name: statistics.median(v) for name, v in cpu.items()}
    floor, floor_cpu = med["python -c pass"], med_cpu["python -c pass"]
    print(f"{'case (medians)':<48}{'wall ms':>9}{'(min)':>8}{'× floor':>9}{'CPU ms':>9}{'(min)':>8}{'× floor':>9}")
    for name in dict.fromkeys([*wall, *cpu]):
        row = f"{name:<48}"
        row += f"{med[name]:>9.1f}{min(wall[name]):>8.1f}{med[name] / floor:>9.2f}" if name in wall else " " * 26
        if name in med_cpu:
            row += f"{med_cpu[name]:>9.1f}{min(cpu[name]):>8.1f}{med_cpu[name] / floor_cpu:>9.2f}"
        print(row)
    for label in bins:
        version = med_cpu[f"{label}nanohermes --version"] / floor_cpu
        first = med_cpu[f"{label}nanohermes -p: CPU at first request"]
        ready = med[f"{label}REPL prompt ready"]
        print(
            f"\n{label or 'this '}build: --version {version:.2f}× the floor's CPU (target ≤ {VERSION_CPU_TARGET:g}); "
            f"-p's first request byte at {first:.0f} ms CPU (target ≤ {FIRST_REQUEST_CPU_TARGET_MS}); "
            f"REPL prompt ready {ready:.0f} ms wall (target ≤ {PROMPT_READY_TARGET_MS}), "
            f"with the first turn {ready + med[f'{label}REPL first turn']:.0f} ms"
        )
    for label in [b for b in bins if b]:
        for name in [n for n in med_cpu if n.startswith(label)]:
            this = name.removeprefix(label)
            print(f"{this}: CPU after / before {med_cpu[this] / med_cpu[name]:.2f}")


if __name__ == "__main__":
    main()
