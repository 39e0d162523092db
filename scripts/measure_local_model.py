"""What `nanohermes --local` gives on this machine: the server it finds, how long the model takes to
load, prompt and generation speed (one streamed request with a ~1,500-token prompt), and with
--e2e the end-to-end tasks (tests/e2e) run against that same server.

    python scripts/measure_local_model.py [--model-file PATH] [--e2e] [-- PYTEST ARGS]

The server is chosen as --local chooses it (llama-server on PATH, the local-llm kit's via
$LOCAL_LLM_DIR, llama-cpp-python's); without --model-file the default model must be in the cache
(it is downloaded when not). Speeds come from the stream itself (time to the first token; then
tokens over the rest), so they compare servers that report timings differently.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# A prompt of real code (~1,500 tokens): the size of a small task's first request.
PROMPT_FILE = REPO / "nanohermes" / "local" / "server.py"
REPLY_TOKENS = 128


def stream_once(base_url: str, model: str) -> dict:
    code = PROMPT_FILE.read_text()
    body = {
        "model": model,
        "messages": [{"role": "user", "content": f"{code}\n\nExplain what this module does, in detail."}],
        "max_tokens": REPLY_TOKENS,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    request = urllib.request.Request(
        f"{base_url}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    started = time.monotonic()
    first = None
    pieces, usage = 0, None
    with urllib.request.urlopen(request, timeout=1800) as response:
        for raw in response:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            usage = chunk.get("usage") or usage
            for choice in chunk.get("choices") or ():
                if (choice.get("delta") or {}).get("content"):
                    first = first or time.monotonic()
                    pieces += 1
    ended = time.monotonic()
    prompt_tokens = (usage or {}).get("prompt_tokens")
    completion = (usage or {}).get("completion_tokens") or pieces
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion,
        "first_token_s": round(first - started, 1) if first else None,
        "prompt_tok_s": round(prompt_tokens / (first - started), 1) if prompt_tokens and first else None,
        "gen_tok_s": round((completion - 1) / (ended - first), 1) if first and ended > first else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-file", type=Path)
    parser.add_argument("--e2e", action="store_true", help="run tests/e2e against the server")
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()

    from nanohermes.configure import load_config
    from nanohermes.local import serve_locally

    config = load_config()
    served = serve_locally(config, args.model_file)
    try:
        session = served.session_config(config)
        print(f"server: {served.server.program.where}")
        print(f"load: {time.monotonic() - served.server.started:.1f} s, window {served.context}")
        print("speed:", json.dumps(stream_once(session.base_url, session.model)))
        if not args.e2e:
            return 0
        env = {**os.environ, "NANOHERMES_E2E_BASE_URL": session.base_url, "NANOHERMES_E2E_MODEL": session.model}
        pytest = [sys.executable, "-m", "pytest", "-n", "0", "tests/e2e", "-v", "-rxX", *args.pytest_args]
        return subprocess.run(pytest, cwd=REPO, env=env).returncode
    finally:
        served.stop()


if __name__ == "__main__":
    sys.exit(main())
