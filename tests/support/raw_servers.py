"""Small raw HTTP servers on 127.0.0.1 that misbehave the way wrong or broken endpoints do:
a web page or plain text where the API should be (nginx's welcome page, Python's http.server
refusing a POST), JSON to a stream request, a stream that never finishes or is cut mid-reply,
a server error with its own message, a port nothing listens on.

Each server answers every request with the same bytes, or the Nth POST with the Nth of a list
(written by hand, no framework), and records the request lines, so a test can count what the
client sent.
"""

from __future__ import annotations

import json
import socket
import threading
import time

HTML_PAGE = "<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head><body><h1>It works</h1></body></html>"


def http_response(status: str, content_type: str, body: str | bytes, headers: dict | None = None) -> bytes:
    data = body.encode() if isinstance(body, str) else body
    lines = [f"HTTP/1.1 {status}", f"Content-Type: {content_type}", f"Content-Length: {len(data)}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def html_page() -> bytes:
    return http_response("200 OK", "text/html; charset=utf-8", HTML_PAGE)


def http_server_page(status: str, message: str) -> bytes:
    """What `python3 -m http.server` answers where there is no file (404) or to a POST (501):
    an HTML error page titled "Error response"."""
    body = (
        '<!DOCTYPE HTML>\n<html lang="en">\n<head><meta charset="utf-8"><title>Error response</title></head>\n'
        f"<body><h1>Error response</h1><p>Error code: {status.split()[0]}</p><p>Message: {message}.</p></body></html>"
    )
    return http_response(status, "text/html;charset=utf-8", body)


def models_listing(*ids: str) -> bytes:
    """GET /models of a server that serves these models."""
    data = [{"id": i, "object": "model", "owned_by": "test"} for i in ids]
    return http_response("200 OK", "application/json", json.dumps({"object": "list", "data": data}))


def chunked_reply(text: str, piece: int = 6, cut_after: int | None = None) -> bytes:
    """A streamed reply of `text` in chunked transfer encoding, one event per HTTP chunk, as
    llama.cpp and vLLM send it. `cut_after`: the server dies after that many pieces of the text
    — no finish_reason, and the body's last chunk never comes (an incomplete chunked read)."""
    pieces = [text[i : i + piece] for i in range(0, len(text), piece)]
    events = [chunk({"role": "assistant", "content": ""})] + [chunk({"content": p}) for p in pieces[:cut_after]]
    if cut_after is None:
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        events += [chunk({}, "stop"), {**chunk({}), "choices": [], "usage": usage}, "[DONE]"]
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    body = b""
    for event in events:
        data = f"data: {event if isinstance(event, str) else json.dumps(event)}\n\n".encode()
        body += f"{len(data):x}\r\n".encode() + data + b"\r\n"
    return head + body + (b"0\r\n\r\n" if cut_after is None else b"")


def plain_text(text: str = "Hello, World!") -> bytes:
    return http_response("200 OK", "text/plain", text)


def json_not_stream() -> bytes:
    """A whole chat.completion where a stream was asked for (the server ignored stream: true)."""
    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    }
    return http_response("200 OK", "application/json", json.dumps(body))


def stream_without_finish() -> bytes:
    """A well-formed event stream that ends with [DONE] but never sends a finish_reason."""
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "half an answer"}, "finish_reason": None}],
    }
    return http_response("200 OK", "text/event-stream", f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n")


def chunk(delta: dict, finish: str | None = None, **extra) -> dict:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def open_event_stream(*events) -> bytes:
    """Headers and these events of an event stream that is never finished: no Content-Length,
    no [DONE]; the connection stays open as long as the server holds it (RawServer hold_open)."""
    head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n"
    body = "".join(f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events)
    return (head + body).encode()


def flood(text: str, piece: int) -> bytes:
    """A whole streamed reply of `text` in deltas of `piece` chars, then [DONE]: the bytes built
    at once, so a test of a reply of hundreds of thousands of deltas pays only the client's cost.
    `text` must need no JSON escaping (letters, digits, spaces)."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
    event = '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"%s"}}]}'
    body = "".join(f"data: {event % text[i : i + piece]}\n\n" for i in range(0, len(text), piece))
    end = [chunk({}, "stop"), {**chunk({}), "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 5}}]
    return head + body.encode() + "".join(f"data: {json.dumps(e)}\n\n" for e in end).encode() + b"data: [DONE]\n\n"


def server_error(message: str, as_json: bool = True) -> bytes:
    if as_json:
        return http_response(
            "500 Internal Server Error",
            "application/json",
            json.dumps({"error": {"message": message, "type": "server_error"}}),
        )
    return http_response("500 Internal Server Error", "text/plain", message)


def no_models() -> bytes:
    """GET /models answered 404 (most servers outside llama.cpp and vLLM say nothing of the window)."""
    return http_response("404 Not Found", "application/json", json.dumps({"error": {"message": "not found"}}))


def closed_port_url() -> str:
    """The URL of a port on 127.0.0.1 that nothing listens on (connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class RawServer:
    """Answers every request with `response` (a list: the Nth POST with its Nth item, the last
    one from then on) and records each request line ("POST /v1/…"). With `hold_open` it keeps
    each connection open that many seconds after the response, sending a `: ping` comment every
    `ping_every` seconds if given (keep-alive comments)."""

    def __init__(
        self,
        response: bytes | list[bytes],
        hold_open: float = 0.0,
        ping_every: float | None = None,
        models: bytes | None = None,
    ):
        """`models`: another answer for GET requests (GET /models), sent and closed at once."""
        self.responses = response if isinstance(response, list) else [response]
        self.hold_open, self.ping_every, self.models = hold_open, ping_every, models
        self.requests: list[str] = []
        self._lock = threading.Lock()
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._closed = False
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def posts(self) -> list[str]:
        return [r for r in self.requests if r.startswith("POST")]

    def close(self) -> None:
        """Shut down first: a bare close() leaves the thread blocked in accept() on the old
        descriptor number, and the next server in this process, given the same number, had its
        connections answered by this one (a test saw another test's nginx page)."""
        self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()

    def _serve(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                line = _read_request(conn)
                with self._lock:
                    self.requests.append(line)
                    nth = len(self.posts()) - 1
                if self.models is not None and line.startswith("GET"):
                    conn.sendall(self.models)
                    return
                conn.sendall(self.responses[min(max(nth, 0), len(self.responses) - 1)])
                until = time.monotonic() + self.hold_open
                while time.monotonic() < until and not self._closed:
                    time.sleep(min(self.ping_every or 0.05, max(until - time.monotonic(), 0)))
                    if self.ping_every:
                        conn.sendall(b": ping\n\n")
            except OSError:
                pass


def _read_request(conn: socket.socket) -> str:
    """Read one request (headers and a Content-Length body); return its request line."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            break
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next((int(h.split(":", 1)[1]) for h in lines[1:] if h.lower().startswith("content-length:")), 0)
    while len(body) < length:
        piece = conn.recv(65536)
        if not piece:
            break
        body += piece
    return lines[0]
