"""The HTTP client the provider talks through (provider/client.py on http.client), against real
servers on 127.0.0.1: a kept-alive connection reused and replaced when the server dropped it,
redirects, the environment's proxy, TLS verified against SSL_CERT_FILE, and each failure as
the error the retry policy reads."""

from __future__ import annotations

import json
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from nanohermes.provider.client import APIConnectionError, APIStatusError, Client
from nanohermes.provider.retry import classify

LISTING = {"object": "list", "data": [{"id": "m", "object": "model"}]}


class Recorder(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, answer, keep_alive: bool = True):
        self.answer, self.keep_alive = answer, keep_alive
        self.lines: list[str] = []
        self.peers: set = set()
        self.bodies: list[bytes] = []
        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, args=(0.02,), daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _any(self):
        server: Recorder = self.server
        server.lines.append(self.requestline)
        server.peers.add(self.client_address)
        length = int(self.headers.get("Content-Length") or 0)
        server.bodies.append(self.rfile.read(length))
        status, headers, body = server.answer(self)
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = not server.keep_alive  # without saying so: the client finds it closed

    do_GET = do_POST = _any


@pytest.fixture
def recorder():
    started = []

    def start(answer, keep_alive: bool = True) -> Recorder:
        started.append(Recorder(answer, keep_alive))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def client_for(url: str) -> Client:
    return Client(url, "sk-test", timeout=30, connect=10)


def test_a_kept_alive_connection_is_reused_for_the_next_request(recorder):
    server = recorder(lambda h: (200, {}, LISTING))
    client = client_for(server.url)
    assert client.json("GET", "models") == LISTING and client.json("GET", "models") == LISTING
    assert len(server.lines) == 2 and len(server.peers) == 1


def test_a_connection_the_server_dropped_after_its_answer_is_replaced_by_a_new_one(recorder):
    server = recorder(lambda h: (200, {}, LISTING), keep_alive=False)
    client = client_for(server.url)
    assert [client.json("GET", "models") for _ in range(3)] == [LISTING] * 3
    assert len(server.peers) == 3


def test_a_permanent_redirect_keeps_a_posts_body_and_a_found_one_turns_it_into_a_get(recorder):
    def answer(h):
        if h.path == "/v1/old":
            return 308, {"Location": "/v1/new"}, {}
        if h.path == "/v1/found":
            return 302, {"Location": "/v1/new"}, {}
        return 200, {}, {"method": h.command}

    server = recorder(answer)
    client = client_for(server.url)
    assert client.json("POST", "old", {"a": 1}) == {"method": "POST"} and server.bodies[-1] == b'{"a":1}'
    assert client.json("POST", "found", {"a": 1}) == {"method": "GET"} and server.bodies[-1] == b""


def test_a_request_goes_through_the_proxy_the_environment_names(recorder, monkeypatch):
    proxy = recorder(lambda h: (200, {}, LISTING))
    monkeypatch.setenv("HTTP_PROXY", proxy.url.removesuffix("/v1"))
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert client_for("http://api.example.invalid/v1").json("GET", "models") == LISTING
    assert proxy.lines == ["GET http://api.example.invalid/v1/models HTTP/1.1"]


def test_an_error_status_carries_the_servers_json_and_its_message(recorder):
    server = recorder(lambda h: (404, {}, {"detail": "Not Found"}))
    with pytest.raises(APIStatusError) as caught:
        client_for(server.url).json("GET", "models")
    assert caught.value.status_code == 404 and caught.value.body == {"detail": "Not Found"}
    assert classify(caught.value)[0] == "not_found"


def test_a_port_nothing_listens_on_is_a_refused_connection():
    server = Recorder(lambda h: (200, {}, {}))
    url = server.url
    server.stop()
    with pytest.raises(APIConnectionError) as caught:
        client_for(url).json("GET", "models")
    assert classify(caught.value)[0] == "refused"


@pytest.fixture
def tls_server(recorder, tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    server = recorder(lambda h: (200, {}, LISTING))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    return server, cert


def test_https_is_verified_against_ssl_cert_file(tls_server, monkeypatch):
    server, cert = tls_server
    url = server.url.replace("http://", "https://")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    assert client_for(url).json("GET", "models") == LISTING


def test_an_unverified_certificate_is_a_connection_error_naming_it(tls_server, monkeypatch):
    server, _ = tls_server
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with pytest.raises(APIConnectionError) as caught:
        client_for(server.url.replace("http://", "https://")).json("GET", "models")
    kind, info = classify(caught.value)
    assert kind == "connection" and "certificate verify failed" in info["detail"]
