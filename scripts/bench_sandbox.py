"""Sandbox start-up cost per command, measured side by side in one run (medians; the machine is
shared and noisy, so the cases alternate A B A B … and each round starts with a different one).

  plain          bash -c true, started as run_command starts it (own session, pipes)
  bwrap          the same through confine(): survey, placeholders' locks, bwrap, release
  landlock       the same through confine(prefer="landlock"): the launcher, the ruleset, exec
                 target: ≤ 30 ms median added per command

The workspace is a git repository without `.nanohermes/` (so bwrap also makes, and removes, a
placeholder), and HOME has a ~/.ssh to hide, as a real one would.

Usage: python scripts/bench_sandbox.py [--runs N]
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
from nanohermes.sandbox import SandboxSettings, confine, policy_for, probe  # noqa: E402

TARGET_MS = 30.0
COMMAND = ["bash", "-c", "true"]


def timed(start) -> tuple[float, float]:
    """Wall time from confine() to the end of the command, and the CPU time (user + system) the
    command and everything it started used: the CPU time does not grow with the machine's load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    launch = start()
    try:
        subprocess.run(
            launch.argv if launch else COMMAND,
            env=launch.environ(os.environ) if launch else os.environ,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            start_new_session=True,
            check=True,
            pass_fds=launch.pass_fds if launch else (),
        )
    finally:
        if launch:
            launch.release()
    wall = (time.perf_counter() - began) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    runs = parser.parse_args().runs
    caps = probe()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for sub in ("ws", "state", "home/.ssh", "sandbox-tmp"):
            (root / sub).mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(root / "ws")], check=True)
        os.environ["HOME"] = str(root / "home")
        policy = policy_for(SandboxSettings(), root / "ws", root / "state", root / "sandbox-tmp")
        cases = {"plain bash -c true": lambda: None}
        if caps.bwrap:
            cases["bwrap"] = lambda: confine(COMMAND, policy, policy.workspace, prefer="bwrap")
        if caps.landlock_abi >= 4:
            cases["landlock launcher"] = lambda: confine(COMMAND, policy, policy.workspace, prefer="landlock")
        names = list(cases)
        walls: dict[str, list[float]] = {name: [] for name in names}
        cpus: dict[str, list[float]] = {name: [] for name in names}
        for round_ in range(runs):
            for i in range(len(names)):  # rotated: no case always runs first, after a sleep or a GC
                name = names[(round_ + i) % len(names)]
                wall, cpu = timed(cases[name])
                walls[name].append(wall)
                cpus[name].append(cpu)
    report(names, walls, cpus, runs, caps)


def report(names, walls, cpus, runs, caps) -> None:
    median = {name: statistics.median(v) for name, v in walls.items()}
    base, cpu_base = median[names[0]], statistics.median(cpus[names[0]])
    print(f"sandbox start-up per command, {runs} interleaved runs each (bwrap: {caps.bwrap or caps.bwrap_problem})")
    print(
        f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (wall times grow with it; CPU times do not)"
    )
    print(f"{'case':<22}{'median ms':>10}{'p90 ms':>9}{'added ms':>10}{'CPU ms':>9}{'added CPU':>11}")
    for name in names:
        p90 = statistics.quantiles(walls[name], n=10)[-1]
        added, cpu = median[name] - base, statistics.median(cpus[name])
        verdict = "" if name == names[0] else ("  ok" if added <= TARGET_MS else f"  OVER the {TARGET_MS:g} ms target")
        row = f"{name:<22}{median[name]:>10.1f}{p90:>9.1f}{added:>10.1f}{cpu:>9.1f}{cpu - cpu_base:>11.1f}"
        print(row + verdict)


if __name__ == "__main__":
    main()
