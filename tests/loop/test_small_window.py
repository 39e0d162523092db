"""Small context windows, end to end through the CLI (in-process, for speed) and the scripted server.

The window is learned in this order: config `context_window`, the server's advertised n_ctx
(llama.cpp's /v1/models meta.n_ctx), the n_ctx an overflow error reports, else the default.
The character budget, the tool-result cap and max_tokens follow it."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from nanohermes.cli import app
from nanohermes.config import Config
from nanohermes.context import settings_for_window
from nanohermes.context.budget import MAX_TOOL_RESULT_BYTES as MAX_OUTPUT_BYTES
from nanohermes.context.budget import reply_reserve
from nanohermes.provider import Provider
from tests.support.scripted_server import (
    POLL,
    Error,
    RawSSE,
    Reply,
    ScriptedServer,
    call,
    is_summary_request,
    prompt_tokens,
    text,
)

DEFAULT_MAX_TOKENS = 4096


def llama_overflow(n_prompt: int = 12029, n_ctx: int = 4096) -> Error:
    """llama.cpp's answer to a prompt over its context size (also for stream: true)."""
    return Error(
        400,
        {
            "error": {
                "code": 400,
                "type": "exceed_context_size_error",
                "n_prompt_tokens": n_prompt,
                "n_ctx": n_ctx,
                "message": f"request ({n_prompt} tokens) exceeds the available context size ({n_ctx} tokens), try increasing it",
            }
        },
    )


def run(server, workspace, *args):
    """`nanohermes -p go --yes ...` in this process: the whole CLI path, without the ~1 s of
    starting a Python process (tests/test_cli.py covers the real executable)."""
    result = CliRunner().invoke(
        app, ["-p", "go", "--yes", "--base-url", server.url, "--model", "local-model", "-C", str(workspace), *args]
    )
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout, stderr=result.stderr)


@pytest.fixture
def llama8k():
    srv = ScriptedServer(n_ctx=8192)
    yield srv
    srv.close()


def test_the_configured_window_wins_over_the_advertised_one(workspace, isolated_home):
    (isolated_home / "config.toml").write_text("context_window = 8192\n")
    srv = ScriptedServer(n_ctx=32768)
    try:
        srv.add(text("ok"))
        r = run(srv, workspace)
        assert r.returncode == 0, r.stderr
        assert srv.chat_requests()[0]["max_tokens"] == reply_reserve(8192, DEFAULT_MAX_TOKENS) == 2048
    finally:
        srv.close()


def test_the_advertised_window_scales_max_tokens_and_the_tool_result_cap(llama8k, workspace):
    (workspace / "big.txt").write_text("".join(f"line {i} of a long file\n" for i in range(2_000)))
    llama8k.add(call("read_file", {"path": "big.txt"}), text("read it"))
    r = run(llama8k, workspace)
    assert r.returncode == 0, r.stderr
    first, second = llama8k.chat_requests()
    assert first["max_tokens"] == second["max_tokens"] == 2048
    cap = settings_for_window(8192, DEFAULT_MAX_TOKENS).tool_result_bytes
    result = second["messages"][-1]
    assert cap == 3686 and result["role"] == "tool"
    assert len(result["content"].encode()) <= cap and "1868 more lines (total 2000)" in result["content"]


def test_without_config_or_advertisement_the_defaults_hold(server, workspace):
    (workspace / "big.txt").write_text("".join(f"line {i} of a long file\n" for i in range(2_000)))
    server.add(call("read_file", {"path": "big.txt"}), text("ok"))
    assert run(server, workspace).returncode == 0
    first, second = server.chat_requests()
    assert first["max_tokens"] == DEFAULT_MAX_TOKENS
    assert MAX_OUTPUT_BYTES - 1_000 < len(second["messages"][-1]["content"].encode()) <= MAX_OUTPUT_BYTES


def test_an_overflow_error_teaches_the_window_compacts_and_retries(server, workspace):
    server.add(llama_overflow(n_ctx=4096), text("fits now"))
    r = run(server, workspace)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "fits now\n"
    assert "compacting and retrying" in r.stderr and "exceeds the available context" not in r.stderr
    first, retry = server.chat_requests()
    assert first["stream"] is True  # llama.cpp answers a streaming request with plain JSON
    assert first["max_tokens"] == DEFAULT_MAX_TOKENS
    assert retry["max_tokens"] == reply_reserve(4096, DEFAULT_MAX_TOKENS) == 1024


def test_overflow_retries_are_bounded_then_a_clear_message(server, workspace):
    server.add(*[llama_overflow() for _ in range(3)], text("never sent"))
    r = run(server, workspace)
    assert r.returncode == 1
    assert len(server.chat_requests()) == 3  # the request plus two compact-and-retry attempts
    assert "larger than the model's context window" in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == ""


def test_an_8k_window_fills_to_its_high_water_mark_and_never_overflows(llama8k, workspace):
    """Six 3 KB files overflow what an 8,192-token window leaves for the prompt: a compaction
    keeps every request inside it, and the context grows to most of it first (the server
    reports real prompt sizes, as llama.cpp does)."""
    for i in range(6):
        (workspace / f"part{i}.py").write_text(
            "".join(f"value_{i}_{n} = {n}  # a line of module {i}\n" for n in range(80))
        )
    steps = [call("read_file", {"path": f"part{i}.py"}) for i in range(6)] + [text("all read")]

    def reply(body):
        answer = (
            text("The user asked to read part0..part5.py; part0-part3 were read.")
            if is_summary_request(body)
            else steps.pop(0)
        )
        answer.usage = {"prompt_tokens": prompt_tokens(body), "completion_tokens": 20}
        return answer

    llama8k.handler = reply
    r = run(llama8k, workspace)
    assert r.returncode == 0, r.stderr
    settings = settings_for_window(8192, DEFAULT_MAX_TOKENS)
    assert "context compacted automatically" in r.stderr
    main = [q for q in llama8k.chat_requests() if not is_summary_request(q)]
    assert len(main) == 7
    sizes = [prompt_tokens(q) for q in main]
    assert all(size + q["max_tokens"] <= 8192 for size, q in zip(sizes, main))
    assert max(sizes) > 0.6 * settings.high_water_tokens  # the window is used, not left half empty


def test_a_tool_call_cut_by_max_tokens_is_not_run(llama8k, workspace):
    """The chunks llama.cpp sent when max_tokens cut a call right after its first token."""
    cut = RawSSE(
        [
            {
                "choices": [{"finish_reason": None, "index": 0, "delta": {"role": "assistant", "content": None}}],
                "object": "chat.completion.chunk",
            },
            {
                "choices": [
                    {
                        "finish_reason": None,
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "xNhTPem26fl1d0u49IJKnX7mcKAecYBA",
                                    "type": "function",
                                    "function": {"name": "write_file", "arguments": "{"},
                                }
                            ]
                        },
                    }
                ],
                "object": "chat.completion.chunk",
            },
            {
                "choices": [
                    {
                        "finish_reason": None,
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {"index": 0, "function": {"arguments": '"path": "out.txt", "content": "hal'}}
                            ]
                        },
                    }
                ],
                "object": "chat.completion.chunk",
            },
            {"choices": [{"finish_reason": "length", "index": 0, "delta": {}}], "object": "chat.completion.chunk"},
            {
                "choices": [],
                "object": "chat.completion.chunk",
                "usage": {"completion_tokens": 12, "prompt_tokens": 1500, "total_tokens": 1512},
            },
        ]
    )
    llama8k.add(cut, call("write_file", {"path": "out.txt", "content": "whole"}), text("written"))
    r = run(llama8k, workspace)
    assert r.returncode == 0, r.stderr
    assert (workspace / "out.txt").read_text() == "whole"  # only the complete call ran
    retry = llama8k.chat_requests()[1]["messages"]
    assert "cut off" in retry[-1]["content"] and retry[-1]["role"] == "user"
    assert not any(m.get("tool_calls") for m in retry[1:])  # the broken call was never sent back


def test_cut_tool_calls_are_retried_a_bounded_number_of_times(llama8k, workspace):
    llama8k.add(
        *[
            Reply(tool_calls=[("write_file", '{"path": "x.txt", "content": "ab')], finish_reason="length")
            for _ in range(3)
        ]
    )
    llama8k.add(text("I could not write x.txt."))
    r = run(llama8k, workspace)
    assert r.returncode == 3 and "max_tokens" in r.stderr
    assert len(llama8k.chat_requests()) == 4 and llama8k.chat_requests()[-1]["tool_choice"] == "none"
    assert r.stdout.strip() == "[partial answer: the run stopped early] I could not write x.txt."
    assert not (workspace / "x.txt").exists()


class _VllmModels(BaseHTTPRequestHandler):
    """GET /v1/models as vLLM answers it: max_model_len on each entry, no meta."""

    def do_GET(self):
        body = json.dumps(
            {
                "object": "list",
                "data": [
                    {"id": "other-model", "object": "model", "max_model_len": 32768},
                    {"id": "Qwen/Qwen2.5-Coder-7B-Instruct", "object": "model", "max_model_len": 16384},
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_vllm_advertises_max_model_len_for_the_configured_model(workspace):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _VllmModels)
    threading.Thread(target=httpd.serve_forever, args=(POLL,), daemon=True).start()
    try:
        config = Config(
            model="Qwen/Qwen2.5-Coder-7B-Instruct",
            base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1",
            workspace=workspace,
        )
        assert Provider(config).advertised_context_window() == 16384
    finally:
        httpd.shutdown()
        httpd.server_close()
