"""The proxy a sandboxed command reaches the allowed hosts through (`[sandbox] allow_domains`).

Each confined command that may reach some hosts gets one: it listens on a Unix socket in a
private directory of the host's temp dir, which the sandbox sees (read-only, like all of /);
inside, the relay (sandbox/relay.py) brings it to 127.0.0.1 where HTTP clients expect a proxy.
It answers the two requests an HTTP proxy is sent:

- `CONNECT host:port` (HTTPS, and anything tunnelled): the host checked, then a tunnel;
- `GET http://host:port/path` and the other methods in absolute form (plain HTTP): the host
  checked, the request sent on in origin form with `Connection: close` (one request per
  connection, so a kept-alive connection cannot carry a second request to another host).

The host is compared canonically (sandbox/hosts.py) and resolved here, on the host: the sandbox
has no resolver, so a name it may not reach cannot even be looked up from inside. A refused host
gets `403` with a sentence naming it and the setting, and is recorded (`refused`): the command's
result says so to the model, and its tool line to the user, even when the command exits 0.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
from pathlib import Path

from nanohermes.sandbox.hosts import allowed, canonical_host
from nanohermes.sandbox.relay import pump

HEAD_BYTES = 65_536  # a request line and its headers; more is no proxy request
HEAD_TIMEOUT_S = 60.0  # a client that connected but sends no request is let go
CONNECT_TIMEOUT_S = 30.0  # reaching the allowed host
BACKLOG = 64
SHOWN_HOST_CHARS = 100  # a refused host as the note names it
HOP_BY_HOP = ("proxy-connection", "proxy-authorization", "connection", "keep-alive")
REFUSED = (
    "nanohermes sandbox: {host} is not in the hosts sandboxed commands may reach ([sandbox] allow_domains: "
    "{listed}). Ask the user to add it, or to run the command unsandboxed.\n"
)


class Proxy:
    """One command's proxy; `close()` once the command's process group has ended."""

    def __init__(self, patterns: tuple[str, ...]):
        self.patterns = tuple(patterns)
        self.refused: list[str] = []  # hosts refused, each once, in order
        self.directory = Path(tempfile.mkdtemp(prefix="nanohermes-proxy-"))
        self.path = self.directory / "proxy.sock"
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(self.path))
        self._listener.listen(BACKLOG)
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, name="sandbox-proxy", daemon=True).start()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            live, self._open = self._open, set()
        for sock in (self._listener, *live):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:  # closed
                return
            if not self._keep(client):
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _keep(self, sock: socket.socket) -> bool:
        with self._lock:
            if self._closed:
                sock.close()
                return False
            self._open.add(sock)
            return True

    def _serve(self, client: socket.socket) -> None:
        upstream = None
        try:
            request = _read_head(client)
            if request is None:
                return _answer(client, 400, "nanohermes sandbox: not an HTTP proxy request\n")
            method, target, head, rest = request
            host, port, forward = _destination(method, target, head)
            canonical = canonical_host(host) if host else None
            if not allowed(canonical, self.patterns):
                self._refuse(canonical or host or target)
                listed = ", ".join(self.patterns)
                return _answer(client, 403, REFUSED.format(host=canonical or host or "(no host)", listed=listed))
            try:
                upstream = socket.create_connection((canonical, port), timeout=CONNECT_TIMEOUT_S)
            except OSError as exc:
                return _answer(client, 502, f"nanohermes sandbox: could not reach {canonical}:{port}: {exc}\n")
            if not self._keep(upstream):
                return None
            upstream.settimeout(None)
            client.settimeout(None)
            if forward is None:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream.sendall(forward)
            if rest:
                upstream.sendall(rest)
            pump(client, upstream)
        except OSError:
            pass
        finally:
            client.close()
            with self._lock:  # a long-lived server's proxy holds only the connections still open
                self._open.discard(client)
                if upstream is not None:
                    self._open.discard(upstream)

    def _refuse(self, host: str) -> None:
        shown = "".join(c if c.isprintable() else "?" for c in host)[:SHOWN_HOST_CHARS]
        with self._lock:
            if shown not in self.refused:
                self.refused.append(shown)


def _read_head(client: socket.socket) -> tuple[str, str, list[str], bytes] | None:
    """(method, target, header lines, bytes after the head), or None for no HTTP request."""
    client.settimeout(HEAD_TIMEOUT_S)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(HEAD_BYTES)
        if not chunk or len(data) + len(chunk) > HEAD_BYTES:
            return None
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return None
    return parts[0].upper(), parts[1], lines[1:], rest


def _destination(method: str, target: str, headers: list[str]) -> tuple[str | None, int, bytes | None]:
    """(host, port, the request to send on — None for a tunnel). A host of None: no usable target."""
    if method == "CONNECT":
        host, port = _split_host_port(target, 443)
        return host, port, None
    scheme, sep, remainder = target.partition("://")
    if not sep or scheme.lower() != "http":
        return None, 0, None
    authority, slash, path = remainder.partition("/")
    host, port = _split_host_port(authority, 80)
    kept = [line for line in headers if line.split(":", 1)[0].strip().lower() not in HOP_BY_HOP]
    first = f"{method} /{path if slash else ''} HTTP/1.1"
    return host, port, ("\r\n".join([first, *kept, "Connection: close"]) + "\r\n\r\n").encode("latin-1")


def _split_host_port(authority: str, default: int) -> tuple[str | None, int]:
    if authority.startswith("["):  # [v6]:port
        host, _, tail = authority[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else ""
    elif authority.count(":") == 1:
        host, port_text = authority.split(":")
    else:
        host, port_text = authority, ""
    if not port_text:
        return host or None, default
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None, 0
    return host or None, int(port_text)


def _answer(client: socket.socket, status: int, text: str) -> None:
    reasons = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}
    body = text.encode("utf-8", "replace")
    head = (
        f"HTTP/1.1 {status} {reasons[status]}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nX-NanoHermes-Sandbox: {'refused' if status == 403 else 'error'}\r\n"
        "Connection: close\r\n\r\n"
    )
    try:
        client.sendall(head.encode("ascii") + body)
    except OSError:
        pass
