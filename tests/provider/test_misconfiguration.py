"""Misconfiguration advice that points at the fix, through the real CLI against real servers on
127.0.0.1: a base URL that is a web site (one sentence, the /v1 it probably meant, no retries),
a model the server does not serve (named with the served ones and the nearest), a connection
cut mid-reply (not "cannot reach"), and doctor never calling a model accepted that was not."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from nanohermes.cli import app
from tests.support import raw_servers as raw
from tests.support.scripted_server import serving
from tests.support.timing import HANG_GUARD_S, NEVER_S

pytestmark = pytest.mark.subprocess

BIN = os.path.join(os.path.dirname(sys.executable), "nanohermes")
# The server's count of posts says there was no retry; the time only says nothing waited on a
# timeout (150 s by default). An answer takes about a second, 6.5 s on a 2-core box running the
# suite with four workers, so the bound leaves room and still catches a wait.
NO_WAIT_BOUND_S = 30.0
SERVED = ["llama3.2:3b", "qwen2.5-coder:7b"]


def one_shot(url: str, workspace, *args, input: str | None = None):
    start = time.monotonic()
    r = subprocess.run(
        [BIN, "-p", "hi", "--base-url", url, *args],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    return r, time.monotonic() - start


@pytest.fixture
def serve():
    servers = []

    def start(*args, **kwargs) -> raw.RawServer:
        servers.append(raw.RawServer(*args, **kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


WEB_SITES = {
    # python3 -m http.server in the wrong directory: no file at /models, and no POST at all
    "http.server-501": (raw.http_server_page("501 Unsupported method", "Unsupported method ('POST')"), 501),
    "nginx-404": (raw.http_response("404 Not Found", "text/html", "<html><head><title>404 Not Found</title>"), 404),
    "nginx-welcome-200": (raw.html_page(), 200),
    "text-404": (raw.http_response("404 Not Found", "text/plain", "404 page not found"), 404),  # Ollama without /v1
}


@pytest.mark.parametrize("page,status", WEB_SITES.values(), ids=WEB_SITES.keys())
def test_a_base_url_that_answers_like_a_web_site_gets_one_sentence_with_the_v1_url_and_no_retry(
    serve, workspace, page, status
):
    site = serve(page)
    url = site.url.removesuffix("/v1")  # the address a user gave without the API's /v1
    r, elapsed = one_shot(url, workspace)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    [advice] = [line for line in r.stderr.splitlines() if line.startswith("nanohermes: ")]  # one sentence
    assert advice.startswith(f"nanohermes: The server at {url} answered HTTP {status} with ")
    assert advice.endswith(
        f": this looks like a web page, not an OpenAI-compatible API — did you mean --base-url {url}/v1?"
    )
    assert "<html" not in r.stderr.lower() and "retry" not in r.stderr and "Try again later" not in r.stderr
    assert len(site.posts()) == 1 and elapsed < NO_WAIT_BOUND_S, elapsed


def test_the_web_page_sentence_quotes_the_pages_title_not_its_html(serve, workspace):
    site = serve(raw.http_server_page("501 Unsupported method", "Unsupported method ('POST')"))
    r, _ = one_shot(site.url, workspace)
    assert "answered HTTP 501 with an HTML page (text/html): 'Error response': this looks like a web page" in r.stderr
    assert "is --base-url / OPENAI_BASE_URL the API's own address?" in r.stderr  # it ends in /v1 already


def test_doctor_names_a_web_site_with_the_v1_url_and_never_calls_the_model_accepted(serve):
    site = serve(raw.http_server_page("501 Unsupported method", "Unsupported method ('POST')"))
    url = site.url.removesuffix("/v1")
    result = CliRunner().invoke(app, ["doctor", "--base-url", url])
    assert result.exit_code == 1
    assert f"✗ reachable: GET /models: The server at {url} answered HTTP 501" in result.stdout
    assert f"did you mean --base-url {url}/v1?" in result.stdout
    assert "✓ model" not in result.stdout and "- model: skipped" in result.stdout


def test_doctor_fails_the_model_check_when_its_request_fails_before_any_answer(serve):
    site = serve(raw.server_error("the GPU fell over"), models=raw.no_models())  # no /models to judge by
    result = CliRunner().invoke(app, ["doctor", "--base-url", site.url])
    assert result.exit_code == 1
    model = next(line for line in result.stdout.splitlines() if "model:" in line and "doctor" not in line)
    assert model.startswith("✗ model: not confirmed: the test request failed") and "the GPU fell over" in model
    assert "✓ model" not in result.stdout


def test_a_wrong_model_is_named_with_the_served_models_and_the_nearest_one(server, workspace):
    serving(server, SERVED)
    r, _ = one_shot(server.url, workspace, "--model", "qwen2.5-coder:7")
    assert r.returncode == 1
    assert (
        f"nanohermes: The server at {server.url} does not serve model 'qwen2.5-coder:7' (HTTP 404: model "
        "'qwen2.5-coder:7' not found). It serves: llama3.2:3b, qwen2.5-coder:7b. Did you mean 'qwen2.5-coder:7b'? "
        "Pick one with --model or NANOHERMES_MODEL (in the REPL: /model NAME)." in r.stderr
    )
    assert len(server.chat_requests()) == 1  # a refused model is not retried


def test_doctor_names_a_wrong_model_with_the_nearest_served_one(server):
    serving(server, SERVED)
    result = CliRunner().invoke(app, ["doctor", "--base-url", server.url, "--model", "llama3.2"])
    line = next(line for line in result.stdout.splitlines() if line.startswith(("✓ model", "✗ model")))
    assert line == (
        "✗ model: 'llama3.2' is not served (HTTP 404); the server serves: llama3.2:3b, qwen2.5-coder:7b — "
        "fix: did you mean 'llama3.2:3b'? pick a model it serves with --model or NANOHERMES_MODEL"
    )


def test_a_connection_cut_mid_reply_is_called_dropped_not_unreachable(serve, workspace):
    answer = "The answer is forty-two, and here is why."
    site = serve(raw.chunked_reply(answer, cut_after=3), models=raw.models_listing("m"))
    r, _ = one_shot(site.url, workspace, "--model", "m")
    assert r.returncode == 1 and "Cannot reach" not in r.stderr and "is the server running" not in r.stderr
    assert f"nanohermes: The connection to {site.url} dropped in the middle of the reply (" in r.stderr
    retries = [line for line in r.stderr.splitlines() if "retry" in line]
    assert [line.split(" (")[0] for line in retries] == ["[warning] the connection dropped mid-reply"] * 2
    assert len(site.posts()) == 3


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_a_reply_retried_after_a_cut_reaches_stdout_once(serve, workspace, output_format):
    import json

    answer = "The answer is forty-two, and here is why it matters to everyone who asked."
    site = serve([raw.chunked_reply(answer, cut_after=5), raw.chunked_reply(answer)], models=raw.models_listing("m"))
    r, _ = one_shot(site.url, workspace, "--model", "m", "--output-format", output_format)
    assert r.returncode == 0, r.stderr
    assert (r.stdout + r.stderr).count("retry 1/2") == 1 and answer[:20] not in r.stderr  # no reply text in progress
    if output_format == "text":
        assert r.stdout == answer + "\n"
    elif output_format == "json":
        assert json.loads(r.stdout)["answer"] == answer
    else:
        events = [json.loads(line) for line in r.stdout.splitlines()]
        restart = max(i for i, e in enumerate(events) if e["type"] == "stream_restarted")
        assert "".join(e["text"] for e in events[restart:] if e["type"] == "text_delta") == answer
        assert sum(e["type"] == "stream_restarted" for e in events) == 1


def test_a_one_shot_run_gives_a_silent_server_150_s_by_default(serve, workspace, isolated_home):
    (isolated_home / "config.toml").write_text("slow_reply_notice = 0.3\n")
    silent = serve(raw.open_event_stream(), hold_open=NEVER_S, models=raw.no_models())  # headers, then nothing
    child = subprocess.Popen(
        [BIN, "-p", "hi", "--base-url", silent.url],
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        notice = next(line for line in child.stderr if "has not answered yet" in line)
    finally:
        child.kill()
        child.wait()
    assert "up to request_timeout = 150 s without a reply" in notice


def test_a_configured_request_timeout_still_wins_in_a_one_shot_run(serve, workspace, isolated_home):
    (isolated_home / "config.toml").write_text("request_timeout = 1.0\n")
    silent = serve(raw.open_event_stream(), hold_open=NEVER_S, models=raw.no_models())
    r, elapsed = one_shot(silent.url, workspace)
    assert r.returncode == 1 and "timed out" in r.stderr
    assert len(silent.posts()) == 2 and elapsed < HANG_GUARD_S, elapsed  # 1 s, one quick retry, 1 s: not the stream's
