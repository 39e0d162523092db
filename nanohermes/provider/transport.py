"""Connections for client.py: one kept-alive http.client connection per origin, through the
environment's proxy when it names one, TLS verified against certifi's bundle (as httpx did), or
SSL_CERT_FILE / SSL_CERT_DIR when set; and the Response the provider reads."""

from __future__ import annotations

import base64
import http.client
import json
import os
import threading
from urllib.parse import unquote, urlsplit

READ_PIECE = 65_536  # one network read: what has arrived, up to this much (read1)


class Response:
    """A response as the provider reads it: `status_code`, `headers` (case-insensitive `get`),
    the body whole (`read`, `content`, `text`, `json`) or as it arrives (`iter_bytes`), and the
    `socket` a ReplyWatch may shut down. `close` hands a fully read connection back for reuse."""

    def __init__(self, raw: http.client.HTTPResponse, connection, sock, release):
        self._raw, self._connection, self._release = raw, connection, release
        self.status_code = raw.status
        self.headers = raw.headers
        self.socket = sock  # taken before getresponse(): a connection the server will close drops it there
        self._content: bytes | None = None
        self._closed = False

    def iter_bytes(self):
        while piece := self._raw.read1(READ_PIECE):
            yield piece

    def read(self) -> bytes:
        if self._content is None:
            self._content = self._raw.read()
        return self._content

    @property
    def content(self) -> bytes:
        return self.read()

    @property
    def text(self) -> str:
        charset = self.headers.get_content_charset() or "utf-8"
        try:
            return self.content.decode(charset, "replace")
        except LookupError:  # a charset Python does not know
            return self.content.decode("utf-8", "replace")

    def json(self):
        return json.loads(self.content)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        whole = self._raw.isclosed() and not self._raw.will_close  # read to its end, the server keeps it open
        self._raw.close()
        self._release(self._connection, reusable=whole)


def _proxy_for(scheme: str, host: str) -> str | None:
    """The proxy URL the environment names for `scheme`, unless NO_PROXY exempts `host`.
    urllib.request (~10 ms) is imported only when some *_proxy variable is set."""
    if not any(name.lower().endswith("_proxy") for name in os.environ):
        return None
    import urllib.request

    if urllib.request.proxy_bypass_environment(host):
        return None
    return urllib.request.getproxies_environment().get(scheme)


def tls_context():
    """TLS verified against certifi's bundle, or SSL_CERT_FILE / SSL_CERT_DIR when set (also for
    local/download.py's model download)."""
    import ssl

    if os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context()  # OpenSSL reads them itself
    try:
        import certifi
    except ImportError:
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


class Connections:
    """Idle connections by (scheme, host, port); a request takes one or opens one."""

    def __init__(self):
        self._idle: dict[tuple, list] = {}
        self._lock = threading.Lock()  # a REPL's endpoint check asks from its own thread
        self._tls = None

    def exchange(self, method: str, url: str, body: bytes | None, headers: dict, connect: float, read: float):
        """Send one request; its Response once the headers are in. A kept-alive connection the
        server has closed meanwhile is replaced once by a new one."""
        parts = urlsplit(url)
        key = (parts.scheme, parts.hostname, parts.port)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        reused = self._take(key)
        connection = reused or self._open(parts, connect)
        if connection.proxied_http:  # a plain-HTTP proxy takes the whole URL
            target = f"{parts.scheme}://{parts.netloc}{target}"
        sock = connection.sock
        try:
            sock.settimeout(read)
            connection.request(method, target, body, {**headers, **connection.proxy_headers})
            raw = connection.getresponse()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            connection.close()
            if reused is None:
                raise
            return self.exchange(method, url, body, headers, connect, read)
        except BaseException:
            connection.close()
            raise
        return Response(raw, connection, sock, lambda conn, reusable: self._give_back(key, conn, reusable))

    def _take(self, key: tuple):
        with self._lock:
            idle = self._idle.get(key)
            return idle.pop() if idle else None

    def _give_back(self, key: tuple, connection, reusable: bool) -> None:
        if not reusable:
            connection.close()
            return
        with self._lock:
            self._idle.setdefault(key, []).append(connection)

    def _open(self, parts, connect: float):
        host, port, secure = parts.hostname or "", parts.port, parts.scheme == "https"
        proxy = _proxy_for(parts.scheme, host)
        proxy_headers: dict = {}
        if proxy is None:
            connection = self._connection(secure, host, port, connect)
        else:
            via = urlsplit(proxy if "://" in proxy else "http://" + proxy)
            if via.username:
                secret = f"{unquote(via.username)}:{unquote(via.password or '')}".encode()
                proxy_headers["Proxy-Authorization"] = "Basic " + base64.b64encode(secret).decode()
            connection = self._connection(secure, via.hostname or "", via.port or 80, connect)
            if secure:
                connection.set_tunnel(host, port or 443, headers=proxy_headers)
                proxy_headers = {}
        connection.proxied_http = proxy is not None and not secure
        connection.proxy_headers = proxy_headers
        connection.connect()
        return connection

    def _connection(self, secure: bool, host: str, port: int | None, connect: float):
        if not secure:
            return http.client.HTTPConnection(host, port, timeout=connect)
        if self._tls is None:
            self._tls = tls_context()
        return http.client.HTTPSConnection(host, port, timeout=connect, context=self._tls)
