"""Start-up cost, measured side by side in one run (medians; the machine is shared and noisy).

  python -c pass                       the floor: the same venv's bare interpreter
  nanohermes --version                 target ≤ 50 ms
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
    server.handler = lambda body: text(ANSWER)
    bins = {"": BIN, "before ": args.before} if args.before else {"": BIN}
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as ws:
        env = {**os.environ, "NANOHERMES_HOME": home, "OPENAI_API_KEY": "x"}
        cases = {"python -c pass": [sys.executable, "-c", "pass"]}
        for label, bin_dir in bins.items():
            cases[f"{label}nanohermes --version"] = [str(bin_dir / "nanohermes"), "--version"]
        for label, bin_dir in bins.items():
            cases[f"{label}nanohermes -p (one request)"] = [
                *(str(bin_dir / "nanohermes"), "-p", "hi", "--base-url", server.url, "--model", "m")
            ]
        cases["bare openai script (one request)"] = [sys.executable, "-c", BARE, server.url]
        wall: dict[str, list[float]] = {name: [] for name in cases}
        cpu: dict[str, list[float]] = {name: [] for name in cases}
        for label in bins:
            wall[f"{label}REPL prompt ready"], cpu[f"{label}REPL prompt ready"] = [], []
            wall[f"{label}REPL first turn"] = []
        for _ in range(args.runs):  # interleaved, so load spikes hit every case alike
            for name, cmd in cases.items():
                ms, cpu_used = timed(cmd, env, ws)
                wall[name].append(ms)
                cpu[name].append(cpu_used)
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
    print(f"{'case':<40}{'wall ms':>9}{'(min)':>8}{'× floor':>9}{'CPU ms':>9}{'× floor':>9}")
    for name, values in wall.items():
        row = f"{name:<40}{med[name]:>9.1f}{min(values):>8.1f}{med[name] / floor:>9.2f}"
        if name in med_cpu:
            row += f"{med_cpu[name]:>9.1f}{med_cpu[name] / floor_cpu:>9.2f}"
        print(row)
    bare = med["bare openai script (one request)"]
    for label in bins:
        ready, first = med[f"{label}REPL prompt ready"], med[f"{label}REPL first turn"]
        print(
            f"\n{label or 'this '}--version median {med[f'{label}nanohermes --version']:.1f} ms (target ≤ 50); "
            f"REPL prompt ready {ready:.0f} ms (target ≤ 300), with the first turn {ready + first:.0f} ms; "
            f"-p / bare request ratio {med[f'{label}nanohermes -p (one request)'] / bare:.2f} (target ≤ 1.2)"
        )


if __name__ == "__main__":
    main()
