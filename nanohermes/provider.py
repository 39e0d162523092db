"""The OpenAI-compatible adapter: streaming with tool-call deltas, retries by a policy table.

`openai` costs ~0.5 s to import, so it is imported on the first request, never at start-up.
"""

from __future__ import annotations

import math
import random
import re
import time
from dataclasses import dataclass, field
from typing import Callable

from nanohermes.config import Config
from nanohermes.errors import ContextOverflowError, NanoHermesError, ProviderError


@dataclass
class AssistantTurn:
    content: str = ""
    tool_calls: list[dict] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict | None = None

    def as_message(self) -> dict:
        message: dict = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message


class StreamCut(Exception):
    """The connection closed before a finish_reason arrived: the reply is incomplete."""


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
    info = {"status": status, "detail": detail[:300], "n_ctx": _n_ctx(body, detail), "retry_after": _retry_after(exc)}
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


class Provider:
    """One OpenAI-compatible endpoint. `on_retry(text)` reports each retry to the user."""

    def __init__(self, config: Config, on_retry: Callable[[str], None] | None = None, sleep=time.sleep):
        self.config = config
        self.on_retry = on_retry or (lambda text: None)
        self._sleep = sleep
        self._client = None
        self.max_tokens = config.max_tokens  # lowered for small context windows

    @property
    def client(self):
        if self._client is None:
            import openai  # lazy: ~0.5 s

            self._client = openai.OpenAI(
                api_key=self.config.resolved_api_key(),
                base_url=self.config.effective_base_url,
                timeout=self.config.request_timeout,
                max_retries=0,  # our RETRY_POLICY decides
            )
        return self._client

    def _with_retries(self, request: Callable[[], object], retries: int | None = None, on_restart=None):
        max_retries = self.config.max_retries if retries is None else min(retries, self.config.max_retries)
        for attempt in range(max_retries + 1):
            if attempt and on_restart is not None:
                on_restart()
            try:
                return request()
            except Exception as exc:
                if isinstance(exc, (NanoHermesError, TypeError, AttributeError)):  # ours, or a bug
                    raise
                kind, info = classify(exc)
                rule = RETRY_POLICY[kind]
                if not rule.retry or attempt == max_retries:
                    raise self._error(kind, info) from None
                delay = backoff_delay(attempt, info["retry_after"])
                self.on_retry(f"{kind.replace('_', ' ')} ({info['status'] or info['detail'][:60]}); retry {attempt + 1}/{max_retries} in {delay:.1f}s")
                self._sleep(delay)
        raise AssertionError("unreachable")

    def _error(self, kind: str, info: dict) -> ProviderError:
        text = RETRY_POLICY[kind].advice.format(url=self.config.effective_base_url, model=self.config.model, **info)
        if kind == "overflow":
            return ContextOverflowError(f"{text} ({info['detail']})", n_ctx=info["n_ctx"])
        return ProviderError(text)

    def stream_chat(self, messages: list[dict], tools: list[dict], on_text: Callable[[str], None],
                    on_restart: Callable[[], None] | None = None) -> AssistantTurn:
        """Send one streaming request; assemble text and tool calls; return the whole turn.
        `on_restart` is called before a retry streams the reply again from the start."""

        def request():
            kwargs = dict(
                model=self.config.model, messages=messages, stream=True,
                stream_options={"include_usage": True}, max_tokens=self.max_tokens,
            )
            if tools:
                kwargs["tools"] = tools
            if self.config.temperature is not None:
                kwargs["temperature"] = self.config.temperature
            return assemble_stream(self.client.chat.completions.create(**kwargs), on_text)

        return self._with_retries(request, on_restart=on_restart)

    def complete(self, messages: list[dict], model: str | None = None, max_tokens: int = 1024, retries: int | None = None) -> AssistantTurn:
        """One non-streaming, tool-less request (used by the summariser)."""

        def request():
            kwargs = dict(model=model or self.config.model, messages=messages, max_tokens=max_tokens, temperature=0)
            response = self.client.chat.completions.create(**kwargs)
            choice = response.choices[0] if response.choices else None
            usage = response.usage.model_dump() if getattr(response, "usage", None) else None
            content = (choice.message.content or "") if choice else ""
            return AssistantTurn(content=content, finish_reason=choice.finish_reason if choice else None, usage=usage)

        return self._with_retries(request, retries)

    def advertised_context_window(self) -> int | None:
        """The window GET /models advertises: llama.cpp's data[].meta.n_ctx, vLLM's
        data[].max_model_len (the configured model's entry first); most others say nothing."""
        try:
            page = self.client.models.with_raw_response.list()
            data = page.http_response.json().get("data") or []
        except Exception:
            return None
        models = sorted((m for m in data if isinstance(m, dict)), key=lambda m: m.get("id") != self.config.model)
        for model in models:
            for value in ((model.get("meta") or {}).get("n_ctx"), model.get("max_model_len")):
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
        return None


def _call_index(tc, calls: dict[int, dict]) -> int:
    """Servers that omit `index`: a delta with a new id starts a call, others continue the last."""
    if tc.index is not None:
        return tc.index
    if calls and (not tc.id or tc.id == calls[max(calls)]["id"]):
        return max(calls)
    return len(calls)


def assemble_stream(stream, on_text: Callable[[str], None]) -> AssistantTurn:
    """Fold chat.completion.chunk deltas into one AssistantTurn; tool calls are keyed by index."""
    turn = AssistantTurn()
    text_parts: list[str] = []
    calls: dict[int, dict] = {}
    try:
        for chunk in stream:
            if getattr(chunk, "usage", None):
                turn.usage = chunk.usage.model_dump()
            for choice in chunk.choices or []:
                delta = choice.delta
                if delta is not None and delta.content:
                    text_parts.append(delta.content)
                    on_text(delta.content)
                for tc in (delta.tool_calls or []) if delta is not None else []:
                    slot = calls.setdefault(_call_index(tc, calls), {"id": "", "name": "", "arguments": ""})
                    if tc.id:
                        slot["id"] = tc.id
                    if tc.function is not None:
                        name = tc.function.name or ""
                        if name != slot["name"]:  # some servers repeat the name in every chunk
                            slot["name"] += name
                        slot["arguments"] += tc.function.arguments or ""
                if choice.finish_reason:
                    turn.finish_reason = choice.finish_reason
    finally:
        close = getattr(stream, "close", None)
        if close:
            close()
    if turn.finish_reason is None:
        raise StreamCut("the stream ended before the reply was finished")
    turn.content = "".join(text_parts)
    for n, (_, slot) in enumerate(sorted(calls.items())):
        call_id = slot["id"] or f"call_{n}_{random.randrange(16**8):08x}"  # some servers omit ids
        turn.tool_calls.append({"id": call_id, "type": "function", "function": {"name": slot["name"], "arguments": slot["arguments"]}})
    return turn
