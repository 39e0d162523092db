"""Prompt tokens a real llama.cpp server evaluates for one task, this checkout against the
previous main, side by side on the same server in one run.

    ../shared/local-llm/serve.sh &          # CTX=8192 by default
    .venv/bin/python scripts/bench_real_cache.py --current PATH [--base-url http://127.0.0.1:8091]

The task: the e2e `multi_file_8k` session — five turns, each asking for the class a different
3-5 KB file defines (its files; the prompt says "the whole file") (one `nanohermes -p ... --session` run per turn, as a user resumes). A small proxy in front of the server reads
llama.cpp's `timings` from every reply: `prompt_n` (prompt tokens evaluated) and `cache_n`
(served from its prompt cache). Before each policy's run the server's one slot is flushed with
an unrelated prompt, so neither run inherits the other's cache.
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

sys.path.insert(0, str(ROOT))

from bench_cache import LAUNCHER  # noqa: E402

from tests.e2e.tasks import MULTI_FILE, MULTI_FILES  # noqa: E402

# The e2e task's wording, plus "whole": without it the 1.5B model sometimes reads line 1 only
# (offset=1, limit=1) and copies that call in every later turn, so nothing is read to compact.
PROMPT = "Read the whole file {name} with read_file and tell me the name of the class it defines."


class Timings:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.lock = threading.Lock()


def proxy(upstream: str, timings: Timings) -> ThreadingHTTPServer:
    target = urlsplit(upstream)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _forward(self, body: bytes | None) -> None:
            conn = http.client.HTTPConnection(target.hostname, target.port, timeout=1800)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
            conn.request(self.command, self.path, body=body, headers=headers)
            response = conn.getresponse()
            self.send_response(response.status)
            for k, v in response.getheaders():
                if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                    self.send_header(k, v)
            self.send_header("Connection", "close")
            self.end_headers()
            record: dict = {}
            for line in iter(response.readline, b""):
                self.wfile.write(line)
                self.wfile.flush()
                text = line.decode("utf-8", "replace").strip()
                if '"timings"' in text and text.startswith(("data: {", "{")):  # a stream's last chunk, or a whole reply
                    record = json.loads(text.removeprefix("data: ")).get("timings", {})
            if body and record:
                with timings.lock:
                    timings.requests.append(
                        {"prompt_n": record.get("prompt_n", 0), "cache_n": record.get("cache_n", 0)}
                    )
            conn.close()
            self.close_connection = True

        def do_GET(self):
            self._forward(None)

        def do_POST(self):
            self._forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def flush_slot(upstream: str) -> None:
    body = json.dumps(
        {
            "model": "local-model",
            "max_tokens": 1,
            "messages": [{"role": "user", "content": "Unrelated: " + "zebra " * 200}],
        }
    )
    conn = http.client.HTTPConnection(urlsplit(upstream).hostname, urlsplit(upstream).port, timeout=600)
    conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
    conn.getresponse().read()


def run_policy(src: Path, url: str, upstream: str, timings: Timings) -> dict:
    flush_slot(upstream)
    start_index = len(timings.requests)
    with tempfile.TemporaryDirectory() as tmp:
        workspace, home = Path(tmp) / "ws", Path(tmp) / "home"
        workspace.mkdir()
        home.mkdir()
        answers = []
        for name, text in MULTI_FILE.files.items():
            (workspace / name).write_text(text)
        start = time.perf_counter()
        for name in MULTI_FILE.files:
            prompt = PROMPT.format(name=name)
            proc = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    LAUNCHER,
                    str(src),
                    "-p",
                    prompt,
                    "--session",
                    "real",
                    "--yes",
                    "--base-url",
                    url + "/v1",
                    "--model",
                    "local-model",
                    "-C",
                    str(workspace),
                ],
                env={"NANOHERMES_HOME": str(home), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
                capture_output=True,
                text=True,
                timeout=3600,
            )
            answers.append((proc.returncode, proc.stdout.strip()[:80]))
            if "--verbose" in sys.argv:
                print(proc.stderr, file=sys.stderr)
        wall = time.perf_counter() - start
    mine = timings.requests[start_index:]
    return {
        "wall_s": wall,
        "requests": len(mine),
        "evaluated": sum(r["prompt_n"] for r in mine),
        "cached": sum(r["cache_n"] for r in mine),
        "answers": answers,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8091")
    parser.add_argument("--current", type=Path, required=True, help="a checkout of the previous main")
    parser.add_argument("--verbose", action="store_true", help="print each run's progress (stderr)")
    args = parser.parse_args()
    upstream = args.base_url.rstrip("/").removesuffix("/v1")
    timings = Timings()
    server = proxy(upstream, timings)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    results = {
        name: run_policy(src, url, upstream, timings) for name, src in (("new", ROOT), ("current", args.current))
    }
    server.shutdown()
    print("| policy | requests | prompt tokens | evaluated | served from cache | wall time | answers right |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        classes = [cls for _, cls, _, _ in MULTI_FILES.values()]
        right = sum(1 for (code, out), cls in zip(r["answers"], classes) if code == 0 and cls in out)
        print(
            f"| {name} | {r['requests']} | {r['evaluated'] + r['cached']:,} | {r['evaluated']:,} | {r['cached']:,} "
            f"| {r['wall_s']:.0f} s | {right}/{len(classes)} |"
        )
    ratio = results["new"]["evaluated"] / max(1, results["current"]["evaluated"])
    print(f"\nevaluated prompt tokens, new / current: {ratio:.2f} (target ≤ 0.60)")
    for name, r in results.items():
        print(name, r["answers"])


if __name__ == "__main__":
    main()
