"""Wrong or broken endpoints fail fast and say what came back, through the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from nanohermes.cli import app
from tests.support import raw_servers as raw

pytestmark = pytest.mark.subprocess

BIN = os.path.join(os.path.dirname(sys.executable), "nanohermes")
# Fast is said by the retry schedule the run prints (one retry, half a second), not by a clock:
# a loaded machine takes seconds just to start Python, and the 16 s of backoff this replaced shows
# in the same notice.


def one_shot(url: str, workspace, *args):
    result = CliRunner().invoke(app, ["-p", "hi", "--base-url", url, "-C", str(workspace), *args])
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout, stderr=result.stderr)


def run_subprocess(url: str, workspace):
    return subprocess.run(
        [BIN, "-p", "hi", "--base-url", url], cwd=workspace, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def serve():
    servers = []

    def start(response: bytes) -> raw.RawServer:
        servers.append(raw.RawServer(response))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_connection_refused_fails_within_seconds_after_one_quick_retry(workspace):
    url = raw.closed_port_url()
    r = run_subprocess(url, workspace)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert f"Cannot reach {url} (Connection refused)" in r.stderr
    assert r.stderr.count("retry 1/1 in 0.5s") == 1 and "retry 2/" not in r.stderr


def test_an_html_page_where_the_api_should_be_is_named_at_once_with_a_base_url_hint(serve, workspace):
    server = serve(raw.html_page())
    r = run_subprocess(server.url, workspace)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "answered HTTP 200 with an HTML page (text/html): 'Welcome to nginx!'" in r.stderr
    assert "/v1" in r.stderr and "Cannot reach" not in r.stderr
    assert len(server.posts()) == 1 and "retry" not in r.stderr  # named at once


def test_plain_text_where_the_api_should_be_is_quoted(serve, workspace):
    server = serve(raw.plain_text("Hello, World!"))
    r = one_shot(server.url, workspace)
    assert r.returncode == 1
    assert "with plain text (text/plain): 'Hello, World!'" in r.stderr and len(server.posts()) == 1


def test_json_to_a_stream_request_is_reported_as_not_a_stream(serve, workspace):
    server = serve(raw.json_not_stream())
    r = one_shot(server.url, workspace)
    assert r.returncode == 1
    assert "JSON instead of an event stream (application/json)" in r.stderr and '"chat.completion"' in r.stderr
    assert len(server.posts()) == 1


def test_a_stream_that_never_sends_a_finish_reason_is_retried_once_then_explained(serve, workspace):
    server = serve(raw.stream_without_finish())
    r = one_shot(server.url, workspace)
    assert r.returncode == 1
    assert "the stream ended without a finish_reason after 1 chunk(s)" in r.stderr and "/v1" in r.stderr
    assert len(server.posts()) == 2


@pytest.mark.parametrize("as_json", [True, False], ids=["json-body", "text-body"])
def test_a_server_error_keeps_the_servers_own_message(serve, workspace, isolated_home, as_json):
    (isolated_home / "config.toml").write_text("max_retries = 0\n")
    server = serve(raw.server_error("upstream exploded", as_json=as_json))
    r = one_shot(server.url, workspace)
    assert r.returncode == 1
    assert "server error (HTTP 500)" in r.stderr and "upstream exploded" in r.stderr


def test_a_404_page_suggests_the_base_url_and_quotes_the_server(serve, workspace):
    server = serve(raw.http_response("404 Not Found", "text/plain", "404 page not found"))
    url = server.url.removesuffix("/v1")
    r = one_shot(url, workspace)
    assert r.returncode == 1 and len(server.posts()) == 1
    assert "answered HTTP 404 with plain text (text/plain): '404 page not found'" in r.stderr
    assert f"did you mean --base-url {url}/v1?" in r.stderr


def test_doctor_names_a_web_page_where_the_api_should_be(serve):
    server = serve(raw.html_page())
    result = CliRunner().invoke(app, ["doctor", "--base-url", server.url])
    assert result.exit_code == 1
    assert "✗ reachable: " in result.stdout and "an HTML page (text/html): 'Welcome to nginx!'" in result.stdout
    assert "this looks like a web page, not an OpenAI-compatible API" in result.stdout
