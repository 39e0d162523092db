"""The retry policy as data: which failure, whether to retry, how often, what to tell the user."""

from __future__ import annotations

import errno
import json
import math
import random
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass

from nanohermes.provider.client import APIConnectionError, APIError, APITimeoutError
from nanohermes.provider.sse import SNIPPET_BYTES, SNIPPET_CHARS, NotTheAPI, describe_body
from nanohermes.provider.stream import ReplyTimeout, StreamCut, StreamDropped, root_cause

BASE_URL_HINT = (
    "Check --base-url / OPENAI_BASE_URL: OpenAI-compatible servers usually end in /v1 (e.g. http://127.0.0.1:8080/v1)."
)


@dataclass(frozen=True)
class RetryRule:
    kind: str
    retry: bool
    advice: str  # what to tell the user when retries run out or retrying makes no sense
    max_retries: int | None = None  # a cap below the configured max_retries; None: the configured number
    delay_s: float | None = None  # a fixed pause before the retry; None: exponential backoff
    said: str = ""  # the failure in a retry line's words; "": the kind's name


# Nothing listens, or the name does not resolve: a server being started may be up a moment
# later, so one retry after half a second; more would only delay the answer (was 16 s).
QUICK_RETRY_S = 0.5

# The retry policy as data: which failure, whether to retry, what the user should do.
# Every final message keeps the server's own words: {detail} where the advice names it,
# else Provider appends them.
RETRY_POLICY = {
    "rate_limit": RetryRule(
        "rate_limit",
        True,
        "The provider is rate-limiting requests (HTTP 429). Wait a little, or check your plan's limits.",
    ),
    "server": RetryRule(
        "server", True, "The provider returned a server error (HTTP {status}). Try again later.", said="server error"
    ),
    # A request that timed out already waited request_timeout seconds (600 by default) without
    # a byte of the reply: one quick retry for a connection that died quietly; more would only
    # multiply the wait (it was 4, about 50 minutes before the user heard anything).
    "timeout": RetryRule(
        "timeout",
        True,
        "The request to {url} timed out ({detail}). A slow local server may need a "
        "larger request_timeout in config.toml.",
        max_retries=1,
        delay_s=QUICK_RETRY_S,
    ),
    "connection": RetryRule(
        "connection",
        True,
        "Cannot reach {url} ({detail}). Check that the server is running and --base-url / OPENAI_BASE_URL is right.",
    ),
    "refused": RetryRule(
        "refused",
        True,
        "Cannot reach {url} ({detail}). Check that the server is running and --base-url / OPENAI_BASE_URL is right.",
        max_retries=1,
        delay_s=QUICK_RETRY_S,
    ),
    # A reply that ended without a finish_reason: a dropped connection (retry once) or a
    # server that never sends one (retrying cannot help).
    "incomplete_stream": RetryRule(
        "incomplete_stream",
        True,
        "The server at {url} answered, but {detail}, so the reply is incomplete. "
        "If this keeps happening it is not a complete OpenAI-compatible endpoint. " + BASE_URL_HINT,
        max_retries=1,
        delay_s=QUICK_RETRY_S,
    ),
    # The connection broke after the reply had started: the server was reachable, and may have
    # crashed or restarted. Two retries ride out a restart; a server that dies on every long
    # reply (out of memory) would only repeat it.
    "dropped": RetryRule(
        "dropped",
        True,
        "The connection to {url} dropped in the middle of the reply ({detail}). The server was answering: "
        "it may have crashed or restarted (see its log), or a proxy between cut the request.",
        max_retries=2,
        said="the connection dropped mid-reply",
    ),
    "not_api": RetryRule(
        "not_api",
        False,
        "The server at {url} answered HTTP 200 with {detail}, not an OpenAI-compatible reply. " + BASE_URL_HINT,
    ),
    # An HTML page where a 200 should be, or "nothing here" (404, 405, 501) without a JSON body:
    # a web server, not the API. Asking again cannot change that ({ask}: the base URL meant).
    "web_page": RetryRule(
        "web_page",
        False,
        "The server at {url} answered HTTP {status} with {detail}: this looks like a web page, not an "
        "OpenAI-compatible API — {ask}",
    ),
    "stream_error": RetryRule(
        "stream_error", True, "The provider reported an error in the middle of the reply: {detail}"
    ),
    "auth": RetryRule(
        "auth",
        False,
        "The server at {url} rejected the API key (HTTP {status}). "
        "Set a valid key with OPENAI_API_KEY or api_key in config.toml.",
    ),
    "not_found": RetryRule(
        "not_found",
        False,
        "The server at {url} does not know model {model!r} (HTTP 404), or the address is wrong. "
        "Pick an available model with --model or NANOHERMES_MODEL. " + BASE_URL_HINT,
    ),
    "overflow": RetryRule("overflow", False, "The request is larger than the model's context window."),
    "bad_request": RetryRule("bad_request", False, "The provider rejected the request (HTTP {status}): {detail}"),
}
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 30.0
DETAIL_CHARS = 300  # the server's message, as much as fits in one paragraph

_OVERFLOW_PATTERNS = re.compile(
    r"context[_ ]length[_ ]exceeded|maximum context length|exceed_context_size|exceeds the available context size"
    r"|context window|too many tokens|prompt is too long|reduce the length",
    re.IGNORECASE,
)
_N_CTX = re.compile(r"context size \((\d+) tokens\)|maximum context length is (\d+)", re.IGNORECASE)
# No connection could be opened at all (as opposed to one that broke mid-request).
_CONNECT_ERRNOS = {errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EADDRNOTAVAIL}
# How a web server says there is nothing at a path, or that it takes no POST there: with a body
# that is not JSON (an API's errors are), the base URL points at a web site.
NOTHING_HERE_STATUSES = (404, 405, 501)


def classify(exc: Exception, redact: Callable[[str], str] = lambda text: text) -> tuple[str, dict]:
    """Map a client.py (or httpx) exception to a RETRY_POLICY kind plus details for messages. The
    server's words pass `redact` whole, before any cut (a 400 that echoes the API key must not print
    a part of it that a redaction of the cut text would miss)."""
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    detail = redact(_error_text(exc, body))
    info = {
        "status": status,
        "detail": detail[:DETAIL_CHARS],
        "n_ctx": _n_ctx(body, detail),
        "n_prompt": _n_prompt(body, detail),
        "retry_after": _retry_after(exc),
    }
    if isinstance(exc, NotTheAPI):
        return ("web_page", {**info, "status": 200}) if exc.web_page else ("not_api", info)
    if isinstance(exc, StreamDropped):
        return "dropped", info
    page = _page(exc, body)
    if page is not None:  # what came back in a few words (a page's title), not its raw HTML
        info["detail"] = redact(page)
        if status in NOTHING_HERE_STATUSES:
            return "web_page", info
    if isinstance(exc, json.JSONDecodeError):  # an event whose data is not JSON
        snippet = redact(exc.doc)[:SNIPPET_CHARS]
        return "not_api", {**info, "detail": f"an event stream whose data is not JSON ({snippet!r})"}
    if isinstance(exc, StreamCut):
        return "incomplete_stream", info
    if isinstance(exc, ReplyTimeout):
        return "timeout", info
    if isinstance(exc, APITimeoutError):
        return "timeout", {**info, "detail": "no answer within request_timeout"}
    if isinstance(exc, APIConnectionError):
        refused = _connect_failure(exc)
        if refused is not None:
            return "refused", {**info, "detail": refused}
        return "connection", {**info, "detail": redact(root_cause(exc))[:DETAIL_CHARS]}
    if status == 413 or (status in (400, None) and _OVERFLOW_PATTERNS.search(detail + " " + _error_code(body))):
        return "overflow", info
    if status == 429:
        return "rate_limit", info
    if status in (401, 403):
        return "auth", info
    if status == 404:
        return "not_found", info
    if status is not None and status >= 500:
        return "server", info
    if status is None and isinstance(exc, APIError):  # an {"error": …} event inside the stream
        return "stream_error", info
    if status is None:  # a stream cut mid-way surfaces as a plain httpx/OS error
        return "connection", info
    return "bad_request", info


def _connect_failure(exc: BaseException) -> str | None:
    """The OS's words when no connection could be opened (refused, unknown host, no route)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, socket.gaierror) or (isinstance(exc, OSError) and exc.errno in _CONNECT_ERRNOS):
            return exc.strerror or str(exc)
        exc = exc.__cause__ or exc.__context__
    return None


def _page(exc: Exception, body) -> str | None:
    """What an HTTP error's body that is not JSON says, in a few words (an HTML page by its
    title), else None."""
    response = getattr(exc, "response", None)
    if response is None or getattr(exc, "status_code", None) is None or isinstance(body, (dict, list)):
        return None
    return describe_body(response.headers.get("content-type", ""), response.content[:SNIPPET_BYTES])


def _error_text(exc: Exception, body) -> str:
    """The server's own message: the error's message field, else its whole body as text."""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            said = err.get("message") or (err["detail"] if isinstance(err.get("detail"), str) else "")  # FastAPI's
            return str(said or " ".join(str(err.get(k, "")) for k in ("type", "code")).strip())
        return str(err)
    if isinstance(body, str) and body.strip():
        return " ".join(body.split())
    return str(getattr(exc, "message", None) or exc)


_N_PROMPT = re.compile(r"request \((\d+) tokens\)|resulted in (\d+) tokens|you requested (\d+) tokens", re.IGNORECASE)


def _n_prompt(body, detail: str) -> int | None:
    """How long the provider says the rejected prompt was (llama.cpp's n_prompt_tokens, or the text)."""
    return _token_count(body, "n_prompt_tokens", _N_PROMPT, detail)


def _error_code(body) -> str:
    err = body.get("error", body) if isinstance(body, dict) else None
    return " ".join(str(err.get(k) or "") for k in ("type", "code")) if isinstance(err, dict) else ""


def _n_ctx(body, detail: str) -> int | None:
    """The context size the provider says it has (llama.cpp's n_ctx, or the text)."""
    return _token_count(body, "n_ctx", _N_CTX, detail)


def _token_count(body, field: str, said: re.Pattern, detail: str) -> int | None:
    """A count from the error body's `field` (llama.cpp), else the first number `said` finds in the text."""
    err = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(err, dict) and isinstance(err.get(field), int):
        return err[field]
    match = said.search(detail)
    return int(next(g for g in match.groups() if g)) if match else None


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        seconds = float(value) if value else None
    except ValueError:
        return None  # an HTTP date or garbage: fall back to our own backoff
    if seconds is None or not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), BACKOFF_CAP_S * 4)


def retry_limit(rule: RetryRule, configured: int) -> int:
    """How many retries this kind of failure gets: the rule's cap within the configured number."""
    if not rule.retry:
        return 0
    return configured if rule.max_retries is None else min(rule.max_retries, configured)


def backoff_delay(attempt: int, retry_after: float | None, rule: RetryRule | None = None) -> float:
    if retry_after is not None:
        return retry_after
    if rule is not None and rule.delay_s is not None:
        return rule.delay_s
    return min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**attempt) * (0.75 + random.random() / 2)
