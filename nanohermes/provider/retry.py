"""The retry policy as data: which failure, whether to retry, what to tell the user."""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

from nanohermes.provider.stream import StreamCut


@dataclass(frozen=True)
class RetryRule:
    kind: str
    retry: bool
    advice: str  # what to tell the user when retries run out or retrying makes no sense


# The retry policy as data: which failure, whether to retry, what the user should do.
RETRY_POLICY = {
    "rate_limit": RetryRule("rate_limit", True, "The provider is rate-limiting requests (HTTP 429). Wait a little, or check your plan's limits."),
    "server": RetryRule("server", True, "The provider returned a server error (HTTP {status}). Try again later."),
    "timeout": RetryRule("timeout", True, "The request to {url} timed out."),
    "connection": RetryRule("connection", True, "Cannot reach {url}. Check that the server is running and --base-url / OPENAI_BASE_URL is right."),
    "stream_error": RetryRule("stream_error", True, "The provider reported an error in the middle of the reply: {detail}"),
    "auth": RetryRule("auth", False, "The server at {url} rejected the API key (HTTP {status}). Set a valid key with OPENAI_API_KEY or api_key in config.toml."),
    "not_found": RetryRule("not_found", False, "The server at {url} does not know model {model!r} (HTTP 404). Pick an available one with --model or NANOHERMES_MODEL."),
    "overflow": RetryRule("overflow", False, "The request is larger than the model's context window."),
    "bad_request": RetryRule("bad_request", False, "The provider rejected the request (HTTP {status}): {detail}"),
}
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 30.0

_OVERFLOW_PATTERNS = re.compile(
    r"context[_ ]length[_ ]exceeded|maximum context length|exceed_context_size|exceeds the available context size"
    r"|context window|too many tokens|prompt is too long|reduce the length",
    re.IGNORECASE,
)
_N_CTX = re.compile(r"context size \((\d+) tokens\)|maximum context length is (\d+)", re.IGNORECASE)


def classify(exc: Exception) -> tuple[str, dict]:
    """Map an openai/httpx exception to a RETRY_POLICY kind plus details for messages."""
    import openai

    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    detail = _error_text(exc, body)
    info = {"status": status, "detail": detail[:300], "n_ctx": _n_ctx(body, detail), "n_prompt": _n_prompt(body, detail),
            "retry_after": _retry_after(exc)}
    if isinstance(exc, openai.APITimeoutError):
        return "timeout", info
    if isinstance(exc, (openai.APIConnectionError, StreamCut)):
        return "connection", info
    if status == 413 or (status in (400, None) and _OVERFLOW_PATTERNS.search(detail)):
        return "overflow", info
    if status == 429:
        return "rate_limit", info
    if status in (401, 403):
        return "auth", info
    if status == 404:
        return "not_found", info
    if status is not None and status >= 500:
        return "server", info
    if status is None and isinstance(exc, openai.APIError):  # an {"error": …} event inside the stream
        return "stream_error", info
    if status is None:  # a stream cut mid-way surfaces as a plain httpx/OS error
        return "connection", info
    return "bad_request", info


def _error_text(exc: Exception, body) -> str:
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            return " ".join(str(err.get(k, "")) for k in ("message", "type", "code")).strip()
        return str(err)
    return str(getattr(exc, "message", None) or exc)


_N_PROMPT = re.compile(r"request \((\d+) tokens\)|resulted in (\d+) tokens|you requested (\d+) tokens", re.IGNORECASE)


def _n_prompt(body, detail: str) -> int | None:
    """How long the provider says the rejected prompt was (llama.cpp's n_prompt_tokens, or the text)."""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("n_prompt_tokens"), int):
            return err["n_prompt_tokens"]
    match = _N_PROMPT.search(detail)
    return int(next(g for g in match.groups() if g)) if match else None


def _n_ctx(body, detail: str) -> int | None:
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("n_ctx"), int):
            return err["n_ctx"]
    match = _N_CTX.search(detail)
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


def backoff_delay(attempt: int, retry_after: float | None) -> float:
    if retry_after is not None:
        return retry_after
    return min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**attempt) * (0.75 + random.random() / 2)
