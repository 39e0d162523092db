"""A stand-in for llama.cpp's llama-server (and llama-cpp-python's `python -m llama_cpp.server`), for
`--local`'s lifecycle tests: a real process that takes their arguments and speaks the OpenAI API on the port it is given (the scripted
server, tests/support/scripted_server.py), without a model.

What it does comes from words in the "model file" it is given (a GGUF magic, then words):
- `die`: prints what llama-server prints for a broken file and exits 1 before listening;
- `loading:N`: answers GET /v1/models with 503 "Loading model" N times first;
- `never-ready`: always 503;
- `n_ctx:N`: advertises N tokens whatever -c said;
- `slow`: a chat reply's first byte waits 600 s (for a test that stops NanoHermes mid-request).
It answers every chat request "stand-in <alias> n_ctx <N>", starts a `sleep` in its own process
group (a helper a real server might start: stopping must end it too), and appends one JSON line
per event to $STANDIN_RECORD: its pid, argv and helper's pid at start, each request's body.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.scripted_server import Error, ScriptedServer, text

RECORD = os.environ.get("STANDIN_RECORD")


def record(**event) -> None:
    if RECORD:
        with open(RECORD, "a", encoding="utf-8") as f:
            f.write(json.dumps(event) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-m", "--model", dest="model", required=True)  # llama-server's, llama_cpp.server's
    parser.add_argument("-a", "--model_alias", dest="alias", default="local-model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("-c", "--n_ctx", dest="ctx", type=int, default=4096)
    args, _ = parser.parse_known_args()
    words = Path(args.model).read_bytes()[4:].decode()
    helper = subprocess.Popen(["sleep", "3600"])  # same process group as this one
    record(event="start", pid=os.getpid(), helper=helper.pid, argv=sys.argv[1:], port_env=os.environ.get("PORT"))
    if "die" in words:
        print("llama_model_load: error loading model: tensor 'blk.0.attn_q.weight' data is not within the file bounds")
        print("main: exiting due to model loading error", file=sys.stderr, flush=True)
        sys.exit(1)
    advertised = re.search(r"n_ctx:(\d+)", words)
    n_ctx = int(advertised.group(1)) if advertised else args.ctx
    loading = re.search(r"loading:(\d+)", words)
    still_loading = [int(loading.group(1)) if loading else 0]
    server = ScriptedServer(n_ctx=n_ctx, port=args.port)

    def models(body):
        if "never-ready" in words or still_loading[0] > 0:
            still_loading[0] -= 1
            return 503, {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}
        entry = {"id": args.alias, "object": "model", "owned_by": "llamacpp", "meta": {"n_ctx": n_ctx}}
        return 200, {"object": "list", "data": [entry]}

    def chat(body):
        record(event="request", body=body)
        if body.get("model") != args.alias:
            return Error(404, {"error": {"message": f"model {body.get('model')!r} not found"}})
        return text(f"stand-in {args.alias} n_ctx {n_ctx}", first_delay=600 if "slow" in words else 0)

    server.routes["GET /v1/models"] = models
    server.routes["GET /props"] = {"default_generation_settings": {"n_ctx": n_ctx}}
    server.handler = chat
    print(f"main: server is listening on http://{args.host}:{args.port}", file=sys.stderr, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
