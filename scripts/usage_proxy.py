"""A counting proxy in front of an OpenAI-compatible server: every agent's tokens counted the same way.

Each agent reports its own usage differently (NanoHermes in its JSON result, aider in a printed line),
so scripts/bench_exercism.py puts this proxy between every agent and the server and sums what the
*server* said: `usage.prompt_tokens` and `usage.completion_tokens` of every reply, plus llama.cpp's
`timings.prompt_n` (the prompt tokens it really evaluated, i.e. not served from its prompt cache).
Streaming requests get `stream_options.include_usage` so the last chunk carries the usage either way.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

UPSTREAM_TIMEOUT_S = 900  # a CPU server may take minutes to answer a long prompt; the bench's own timeout ends a run
ABORT_WAIT_S = 10  # how long abort_open waits for the handlers of closed requests to finish counting
JSON_HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer sk-local"}
HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "accept-encoding"}


@dataclass
class Tally:
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    evaluated_tokens: int = 0  # llama.cpp's timings.prompt_n: prompt tokens not reused from its cache
    unreported: int = 0  # replies that carried no usage (an interrupted stream, an error)


def usage_of_body(body: bytes) -> tuple[dict | None, dict | None]:
    """The `usage` and `timings` objects of a reply, plain JSON or a server-sent event stream (last one wins)."""
    usage = timings = None
    texts = [body.decode("utf-8", "replace")]
    if b"data:" in body[:200] or b"\ndata:" in body:
        texts = [line[5:].strip() for line in texts[0].splitlines() if line.startswith("data:")]
    for text in texts:
        try:
            obj = json.loads(text)
        except ValueError:
            continue
        if isinstance(obj, dict):
            usage = obj.get("usage") or usage
            timings = obj.get("timings") or timings
    return usage, timings


def with_usage_requested(body: bytes) -> bytes:
    """A streaming chat request asks for usage in its last chunk (servers may omit it otherwise)."""
    try:
        obj = json.loads(body)
    except ValueError:
        return body
    if not isinstance(obj, dict) or not obj.get("stream"):
        return body
    obj["stream_options"] = {**(obj.get("stream_options") or {}), "include_usage": True}
    return json.dumps(obj).encode()


class UsageProxy:
    """Forward 127.0.0.1:port → upstream; `take()` returns and resets the tally since the last take."""

    def __init__(self, upstream: str, port: int = 0) -> None:
        parts = urlsplit(upstream)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._lock = threading.Lock()
        self._tally = Tally()
        self._open: set[http.client.HTTPConnection] = set()
        self.requests: list[dict] = []  # the chat requests as the agent sent them, for a replay (replay_reask.py)
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> UsageProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def take(self) -> Tally:
        with self._lock:
            tally, self._tally = self._tally, Tally()
        return tally

    def abort_open(self) -> None:
        """Close every request still open upstream. An agent killed at its timeout leaves its request running
        on the server (the proxy still holds the connection), and with one slot the next agent would wait
        behind it; a closed connection makes llama.cpp drop the task."""
        with self._lock:
            conns = list(self._open)
        for conn in conns:
            try:
                if conn.sock is not None:
                    conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        deadline = time.monotonic() + ABORT_WAIT_S
        while self._open and time.monotonic() < deadline:  # the handlers count what they saw, then let go
            time.sleep(0.05)

    def settle(self, model: str) -> None:
        """Abort what is open, then wait until the server is free: a cancelled request still finishes its
        current prompt batch (close to a minute on a loaded CPU), and the next agent's clock must not pay
        for it. A one-token request queues behind it on any OpenAI-compatible server; it is not counted."""
        self.abort_open()
        probe = {"model": model, "messages": [{"role": "user", "content": "ok"}], "max_tokens": 1}
        conn = http.client.HTTPConnection(self._host, self._port, timeout=UPSTREAM_TIMEOUT_S)
        try:
            conn.request("POST", "/v1/chat/completions", body=json.dumps(probe), headers=JSON_HEADERS)
            conn.getresponse().read()
        except (OSError, http.client.HTTPException):
            pass  # a server that is down shows in the next run's own result
        finally:
            conn.close()

    def _count(self, body: bytes) -> None:
        usage, timings = usage_of_body(body)
        with self._lock:
            self._tally.requests += 1
            if not usage:
                self._tally.unreported += 1
                return
            self._tally.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            self._tally.completion_tokens += int(usage.get("completion_tokens") or 0)
            self._tally.evaluated_tokens += int((timings or {}).get("prompt_n") or usage.get("prompt_tokens") or 0)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # the body ends when the connection closes: no re-chunking needed

            def log_message(self, *args: object) -> None:  # the bench prints its own progress
                pass

            def do_GET(self) -> None:
                self._forward(b"")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._forward(body)

            def _forward(self, body: bytes) -> None:
                counted = self.path.rstrip("/").endswith("/completions")
                if counted:
                    with proxy._lock, contextlib.suppress(ValueError):
                        proxy.requests.append(json.loads(body))
                    body = with_usage_requested(body)
                upstream = http.client.HTTPConnection(proxy._host, proxy._port, timeout=UPSTREAM_TIMEOUT_S)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
                seen = bytearray()
                with proxy._lock:
                    proxy._open.add(upstream)
                try:
                    upstream.request(self.command, self.path, body=body or None, headers=headers)
                    reply = upstream.getresponse()
                    self.send_response(reply.status)
                    for key, value in reply.getheaders():
                        if key.lower() not in HOP_HEADERS:
                            self.send_header(key, value)
                    self.end_headers()
                    while chunk := reply.read1(65536):
                        seen += chunk
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (OSError, http.client.HTTPException):
                    pass  # the agent sees a broken reply, as it would from the server itself
                finally:
                    upstream.close()
                    if counted:
                        proxy._count(bytes(seen))
                    with proxy._lock:
                        proxy._open.discard(upstream)

        return Handler
