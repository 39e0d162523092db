"""The HTTP edge to an OpenAI-compatible server: the three requests NanoHermes makes (a streamed
chat completion, GET /models, a server's own API), on the standard library's http.client.

Why not the openai SDK, or httpx: importing the SDK costs ~0.85 s of CPU (its ~1,000 typed
models) and httpx2 ~0.14 s with its client, which every `-p` run paid before its first request
byte; http.client costs ~10 ms. The reply was already read as plain dicts (sse.py) and the
SDK's retries were off (retry.py decides). Its error classes are mirrored here (a status error
with the body as parsed JSON, a connection error, a timeout), and requests go out as it sent
them (compact JSON, `ensure_ascii=False`: what budget.message_size counts). What an HTTP client
owes a user is kept: HTTP(S)_PROXY / NO_PROXY, redirects, certifi's CA bundle (or
SSL_CERT_FILE / SSL_CERT_DIR), and a kept-alive connection reused.
"""

from __future__ import annotations

import http.client
import json
import sys
from contextlib import contextmanager
from urllib.parse import urljoin

from nanohermes import __version__
from nanohermes.provider.transport import Connections, Response

USER_AGENT = f"NanoHermes/{__version__}"
MAX_REDIRECTS = 5  # a gateway's http→https and a trailing slash are one each; more is a loop
REDIRECTS = frozenset({301, 302, 303, 307, 308})
KEEPS_METHOD = frozenset({307, 308})  # the others turn a POST into a GET without a body, as browsers and httpx do


class APIError(Exception):
    """A failure the server or the network caused. `body`: the response's JSON, its text, or
    None; `status_code`/`response`: None unless the server answered with a status."""

    status_code: int | None = None
    response = None

    def __init__(self, message: str, body: object | None = None):
        super().__init__(message)
        self.message = message
        self.body = body


class APIStatusError(APIError):
    """The server answered 4xx or 5xx."""

    def __init__(self, message: str, response: Response, body: object | None):
        super().__init__(message, body)
        self.response = response
        self.status_code = response.status_code


class APIConnectionError(APIError):
    """No answer: the connection could not be opened, or broke (the cause is chained)."""

    def __init__(self, message: str = "Connection error."):
        super().__init__(message)


class APITimeoutError(APIConnectionError):
    def __init__(self):
        super().__init__("Request timed out.")


def status_error(response: Response) -> APIStatusError:
    """The error for a response with a 4xx/5xx status, its body read (JSON when it parses)."""
    text = response.text.strip()
    message, body = f"Error code: {response.status_code}", text
    try:
        body = json.loads(text)
    except ValueError:
        pass
    else:
        error = body.get("error", body) if isinstance(body, dict) else None
        said = error.get("message") if isinstance(error, dict) else None
        if isinstance(said, str) and said:
            message += f" - {said}"
    return APIStatusError(message, response, body)


def as_api_error(exc: BaseException) -> BaseException:
    """A network failure as one of ours (a timeout, or a connection error); anything else as it is."""
    if isinstance(exc, TimeoutError):  # socket.timeout is TimeoutError
        return APITimeoutError()
    ssl = sys.modules.get("ssl")  # loaded for an https URL only
    if isinstance(exc, (OSError, http.client.HTTPException)) or (ssl is not None and isinstance(exc, ssl.SSLError)):
        return APIConnectionError()
    return exc


@contextmanager
def _translated():
    try:
        yield
    except APIError:
        raise
    except Exception as exc:
        error = as_api_error(exc)
        if error is exc:
            raise
        raise error from exc


class Client:
    """One endpoint: `base_url` (relative paths are joined to it), a key sent as a Bearer token,
    the read timeout `timeout` (seconds without a byte) and the connect timeout `connect`."""

    def __init__(self, base_url: str, api_key: str, timeout: float, connect: float):
        self.base_url = base_url.rstrip("/") + "/"
        self.api_key, self.timeout, self.connect = api_key, timeout, connect
        self._connections = Connections()

    def _url(self, path: str) -> str:
        return path if "://" in path else self.base_url + path.lstrip("/")

    def _headers(self, body: bytes | None) -> dict:
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if self.api_key:  # "": a request without a key (does the server need one?)
            headers["Authorization"] = f"Bearer {self.api_key}"
        if body is not None:
            headers["Content-Type"] = "application/json"
        return headers

    def send(self, method: str, path: str, body: dict | None = None, timeout: float | None = None) -> Response:
        """One request, redirects followed; the response before its body is read (its status
        unchecked). `timeout`: a shorter read timeout than the client's for this request."""
        url = self._url(path)
        content = None
        if body is not None:
            content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        read_timeout = self.timeout if timeout is None else min(timeout, self.timeout)
        with _translated():
            for _ in range(MAX_REDIRECTS + 1):
                response = self._connections.exchange(
                    method, url, content, self._headers(content), min(self.connect, read_timeout), read_timeout
                )
                location = response.headers.get("location")
                if response.status_code not in REDIRECTS or not location:
                    return response
                response.close()
                url = urljoin(url, location)
                if response.status_code not in KEEPS_METHOD:
                    method, content = "GET", None
        return response  # still a redirect after MAX_REDIRECTS: the caller reads it as it is

    @contextmanager
    def stream(self, path: str, body: dict):
        """POST `body` to `path` and yield the response before its body is read; a 4xx/5xx
        raises APIStatusError with the body read."""
        response = self.send("POST", path, body)
        try:
            if response.status_code >= 400:
                with _translated():
                    response.read()
                raise status_error(response)
            yield response
        finally:
            response.close()

    def request(self, method: str, path: str, body: dict | None = None, timeout: float | None = None) -> Response:
        """One whole request: the response with its body read (status below 400), else APIStatusError."""
        response = self.send(method, path, body, timeout)
        try:
            with _translated():
                response.read()
        finally:
            response.close()
        if response.status_code >= 400:
            raise status_error(response)
        return response

    def json(self, method: str, path: str, body: dict | None = None, timeout: float | None = None):
        """The JSON of one request's answer; ValueError when it is not JSON."""
        return self.request(method, path, body, timeout).json()
