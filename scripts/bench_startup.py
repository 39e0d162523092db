"""Start-up cost, measured side by side in one run (medians; the machine is shared and noisy).

  nanohermes --version                 target ≤ 80 ms
  nanohermes -p against a local server vs a bare Python script making the same single
  openai request                       target ≤ 1.2×

Usage: python scripts/bench_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.support.scripted_server import ScriptedServer, text  # noqa: E402

BIN = str(Path(sys.executable).parent / "nanohermes")
BARE = """
import sys, openai
client = openai.OpenAI(api_key="x", base_url=sys.argv[1], max_retries=0)
stream = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
    stream=True, stream_options={"include_usage": True}, max_tokens=100)
print("".join(c.choices[0].delta.content or "" for c in stream if c.choices))
"""


def timed(cmd: list[str], env: dict, cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    server = ScriptedServer()
    server.handler = lambda body: text("hello")
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as ws:
        env = {**os.environ, "NANOHERMES_HOME": home, "OPENAI_API_KEY": "x"}
        cases = {
            "nanohermes --version": [BIN, "--version"],
            "nanohermes -p (one request)": [BIN, "-p", "hi", "--base-url", server.url, "--model", "m"],
            "bare openai script (one request)": [sys.executable, "-c", BARE, server.url],
        }
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(runs):  # interleaved, so load spikes hit every case alike
            for name, cmd in cases.items():
                samples[name].append(timed(cmd, env, ws))
    server.close()
    med = {name: statistics.median(v) for name, v in samples.items()}
    print(f"{'case':<36}{'median ms':>10}{'min ms':>9}")
    for name, values in samples.items():
        print(f"{name:<36}{med[name]:>10.1f}{min(values):>9.1f}")
    ratio = med["nanohermes -p (one request)"] / med["bare openai script (one request)"]
    print(f"\n--version median {med['nanohermes --version']:.1f} ms (target ≤ 80)")
    print(f"-p / bare request ratio {ratio:.2f} (target ≤ 1.2)")


if __name__ == "__main__":
    main()
