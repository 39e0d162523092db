"""Folding a chat.completion.chunk stream into one assistant turn (text, tool calls, usage)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Callable

from nanohermes.text import strip_thinking


@dataclass
class AssistantTurn:
    content: str = ""
    tool_calls: list[dict] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict | None = None

    def as_message(self) -> dict:
        """The turn as it joins the history: without the model's <think> reasoning, which the
        next steps (and a summariser) do not need and which would be paid on every request."""
        message: dict = {"role": "assistant", "content": strip_thinking(self.content)}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message


class StreamCut(Exception):
    """The connection closed before a finish_reason arrived: the reply is incomplete."""


def text_of(content) -> str:
    """Message content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict) and p.get("type", "text") == "text")
    return ""


def normalise_usage(usage: dict, timings: dict | None) -> dict:
    """prompt_tokens, completion_tokens and cached_tokens (None when the server does not say):
    from usage.prompt_tokens_details.cached_tokens (OpenAI, vLLM, llama.cpp), or llama.cpp's
    timings.cache_n (prompt tokens it did not evaluate)."""
    usage = dict(usage or {})
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if cached is None and timings and isinstance(timings.get("cache_n"), int):
        cached = timings["cache_n"]
        if not usage.get("prompt_tokens") and isinstance(timings.get("prompt_n"), int):
            usage["prompt_tokens"] = timings["prompt_n"] + cached
    if cached is None:
        cached = usage.get("cached_tokens")
    usage["cached_tokens"] = cached if isinstance(cached, int) and not isinstance(cached, bool) else None
    return usage


class NotTheAPI(Exception):
    """A 200 whose body is not what the API sends (an HTML page, plain text, JSON to a stream
    request): the base URL points somewhere else. The message says what came back."""


SNIPPET_BYTES = 2048  # enough to find an HTML <title>; the rest of a wrong page is not read
SNIPPET_CHARS = 120
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_BODY_KINDS = {"text/html": "an HTML page", "application/xhtml+xml": "an HTML page", "text/plain": "plain text",
               "application/json": "JSON instead of an event stream"}


def describe_body(content_type: str, head: bytes) -> str:
    """`an HTML page (text/html): 'Welcome to nginx!'`: what a wrong endpoint sent, in a few words."""
    mime = content_type.split(";")[0].strip().lower()
    text = head.decode("utf-8", "replace")
    title = _TITLE.search(text) if "html" in mime else None
    snippet = " ".join((title.group(1) if title else text).split())
    if len(snippet) > SNIPPET_CHARS:
        snippet = snippet[: SNIPPET_CHARS - 1] + "…"
    kind = _BODY_KINDS.get(mime, f"a {mime or 'typeless'} body")
    return f"{kind} ({mime}): {snippet!r}" if snippet else f"{kind} ({mime}, empty)"


def reject_non_stream(stream) -> None:
    """Raise NotTheAPI when a streamed request's response is not an event stream. Every
    OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama, LM Studio, OpenRouter) labels its
    stream text/event-stream; without this check the SDK finds no events in a web page and it
    looks like a dropped connection."""
    response = getattr(stream, "response", None)  # recorded chunk lists have none
    content_type = response.headers.get("content-type", "") if response is not None else ""
    if not content_type or "event-stream" in content_type.lower():
        return
    head = b""
    try:
        for piece in response.iter_bytes():
            head += piece
            if len(head) >= SNIPPET_BYTES:
                break
    finally:
        response.close()
    raise NotTheAPI(describe_body(content_type, head[:SNIPPET_BYTES]))


def _call_index(tc, calls: dict[int, dict]) -> int:
    """Servers that omit `index`: a delta with a new id starts a call, others continue the last."""
    if tc.index is not None:
        return tc.index
    if calls and (not tc.id or tc.id == calls[max(calls)]["id"]):
        return max(calls)
    return len(calls)


def assemble_stream(stream, on_text: Callable[[str], None]) -> AssistantTurn:
    """Fold chat.completion.chunk deltas into one AssistantTurn; tool calls are keyed by index."""
    reject_non_stream(stream)
    turn = AssistantTurn()
    text_parts: list[str] = []
    calls: dict[int, dict] = {}
    chunks = 0
    try:
        for chunk in stream:
            chunks += 1
            if getattr(chunk, "usage", None):
                turn.usage = normalise_usage(chunk.usage.model_dump(), None)
            timings = (getattr(chunk, "model_extra", None) or {}).get("timings")
            if isinstance(timings, dict):  # llama.cpp: in the final chunk, beside or before usage
                turn.usage = normalise_usage(turn.usage or {}, timings)
            for choice in chunk.choices or []:
                delta = choice.delta
                text = text_of(delta.content) if delta is not None else ""
                if text:
                    text_parts.append(text)
                    on_text(text)
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
        raise StreamCut(f"the stream ended without a finish_reason after {chunks} chunk(s)" if chunks
                        else "the event stream held no chunks")
    turn.content = "".join(text_parts)
    for n, (_, slot) in enumerate(sorted(calls.items())):
        call_id = slot["id"] or f"call_{n}_{random.randrange(16**8):08x}"  # some servers omit ids
        turn.tool_calls.append({"id": call_id, "type": "function", "function": {"name": slot["name"], "arguments": slot["arguments"]}})
    return turn
