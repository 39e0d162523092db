"""`nanohermes --local` end to end with a real llama-server and a real GGUF model, offline: the ones
the project's local-llm kit builds and assembles (`MODEL=0.5b ../shared/local-llm/setup.sh`).

Marked `local_llm` and skipped unless NANOHERMES_LOCAL_LLM_DIR names the kit's folder with both in
it: the default suite never builds llama.cpp. `.ci/local-model` builds the kit and runs only these.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.cli import run_cli

KIT = Path(os.environ.get("NANOHERMES_LOCAL_LLM_DIR") or "/nonexistent")
SERVER = KIT / "build" / "bin" / "llama-server"
# The small model first: ~400 MB, ~4x faster on a CPU than the 1.5B, enough for one answer.
MODELS = [KIT / f"qwen2.5-coder-{size}-instruct-q4_k_m.gguf" for size in ("0.5b", "1.5b")]
MODEL = next((m for m in MODELS if m.is_file()), None)
RUN_TIMEOUT = 900  # seconds for a whole run on a busy 2-core machine: loading, a few requests on the CPU

pytestmark = [
    pytest.mark.local_llm,
    pytest.mark.skipif(
        not (SERVER.is_file() and MODEL),
        reason="set NANOHERMES_LOCAL_LLM_DIR to the local-llm kit's folder (.ci/local-model builds it)",
    ),
]


@pytest.fixture
def kit_env(tmp_path):
    """The kit's llama-server found as --local finds it ($LOCAL_LLM_DIR), not one on PATH; no real cache."""
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "llama-server").exists())
    return {"LOCAL_LLM_DIR": str(KIT), "PATH": path, "XDG_CACHE_HOME": str(tmp_path / "cache")}


def test_local_answers_a_question_about_the_repository_with_no_key(kit_env, workspace, isolated_home):
    (workspace / "README.md").write_text("# fizzbuzz\n\nA command-line FizzBuzz: `python fizzbuzz.py 15`.\n")
    (workspace / "fizzbuzz.py").write_text(
        "import sys\n\nfor i in range(1, int(sys.argv[1]) + 1):\n"
        "    print('FizzBuzz' if i % 15 == 0 else 'Fizz' if i % 3 == 0 else 'Buzz' if i % 5 == 0 else i)\n"
    )
    started = time.monotonic()
    r = run_cli(
        [
            "--local",
            "--model-file",
            str(MODEL),
            "-p",
            "What does this repository do, according to README.md? One sentence.",
        ],
        workspace,
        env_extra=kit_env,
        timeout=RUN_TIMEOUT,
    )
    print(f"{MODEL.name}: {time.monotonic() - started:.0f} s\n{r.stderr}\n{r.stdout}")
    assert r.returncode == 0, r.stderr
    assert "fizz" in r.stdout.lower()
    assert f"llama-server ({SERVER}, built by the local-llm kit)" in r.stderr
    assert "Traceback" not in r.stderr
    port = int(r.stderr.split("on 127.0.0.1:")[1].split(",")[0])
    with pytest.raises(OSError):  # stopped with the run
        urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5)


def test_the_real_server_uses_the_window_the_session_assumes(kit_env, monkeypatch, isolated_home):
    """llama-server's own /props and /v1/models say the context the session was given; a chat
    request with tools gets an OpenAI-shaped answer through the shipped template."""
    from nanohermes.configure import load_config
    from nanohermes.local import serve_locally

    for name, value in kit_env.items():
        monkeypatch.setenv(name, value)
    config = replace(load_config(), context_window=4096)
    said: list[str] = []
    served = serve_locally(config, MODEL, said.append)
    try:
        session = served.session_config(config)
        assert session.context_window == 4096 and session.base_url == served.server.base_url
        root = session.base_url.removesuffix("/v1")
        props = json.load(urllib.request.urlopen(f"{root}/props", timeout=30))
        assert props["default_generation_settings"]["n_ctx"] == 4096
        models = json.load(urllib.request.urlopen(f"{root}/v1/models", timeout=30))
        assert models["data"][0]["id"] == MODEL.stem and models["data"][0]["meta"]["n_ctx"] == 4096
        tool = {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}
        body = {
            "model": MODEL.stem,
            "messages": [{"role": "user", "content": "Say hi."}],
            "tools": [tool],
            "max_tokens": 16,
        }
        request = urllib.request.Request(
            f"{root}/v1/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        reply = json.load(urllib.request.urlopen(request, timeout=RUN_TIMEOUT))
        assert reply["choices"][0]["message"]["role"] == "assistant"
    finally:
        served.stop()
    assert served.server.proc.poll() is not None
    assert any(line.startswith("local model ready in") for line in said)
