"""A chat reply's event stream read as plain dicts, one network read at a time.

The SDK's own stream builds a typed object per chunk and decodes lines one call each: a
millisecond or more per chunk on a busy machine, and a reply in one-token deltas has hundreds
of thousands (2 MB in 8-byte deltas took minutes). Here each read's events are split and
parsed at once, and `ready` says how many are parsed and waiting, so the reader can show the
text of one read in one piece. Failures are client.py's (a timeout, a dropped connection, an
`{"error": …}` event), so the retry policy reads them as every other request's. A 200 that is no event stream
at all (a web page, JSON) is named here too (NotTheAPI).
"""

from __future__ import annotations

import re
from collections import deque

from nanohermes.bounded import parse_json

DONE = "[DONE]"  # the OpenAI stream's last event


class NotTheAPI(Exception):
    """A 200 whose body is not what the API sends (an HTML page, plain text, JSON to a stream
    request): the base URL points somewhere else. The message says what came back; `web_page`:
    it was HTML."""

    def __init__(self, described: str, web_page: bool = False):
        super().__init__(described)
        self.web_page = web_page


SNIPPET_BYTES = 2048  # enough to find an HTML <title>; the rest of a wrong page is not read
SNIPPET_CHARS = 120
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_BODY_KINDS = {
    "text/html": "an HTML page",
    "application/xhtml+xml": "an HTML page",
    "text/plain": "plain text",
    "application/json": "JSON instead of an event stream",
}


def is_web_page(content_type: str, head: bytes) -> bool:
    """An HTML page: labelled so, or starting like one whatever its label."""
    mime = content_type.split(";")[0].strip().lower()
    return "html" in mime or head.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))


def describe_body(content_type: str, head: bytes) -> str:
    """`an HTML page (text/html): 'Welcome to nginx!'`: what a wrong endpoint sent, in a few words."""
    mime = content_type.split(";")[0].strip().lower()
    text = head.decode("utf-8", "replace")
    title = _TITLE.search(text) if "html" in mime else None
    snippet = " ".join((title.group(1) if title else text).split())
    if len(snippet) > SNIPPET_CHARS:
        snippet = snippet[: SNIPPET_CHARS - 1] + "…"
    kind = _BODY_KINDS.get(mime, f"a {mime} body" if mime else "a body without a content type")
    if not mime:
        return f"{kind}: {snippet!r}" if snippet else "an empty body"
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
    raise NotTheAPI(describe_body(content_type, head[:SNIPPET_BYTES]), is_web_page(content_type, head))


class EventStream:
    """Iterates over the chunks (dicts, or whatever JSON value a server sent) of `response`."""

    def __init__(self, response):
        self.response = response
        self._ready: deque = deque()
        self._partial = b""  # a line not finished by the last read
        self._carry = ""  # the lines of an event not finished by the last read
        self._done = False
        self._reads = None

    @property
    def ready(self) -> int:
        """Chunks parsed and waiting: taking them does not wait for the network."""
        return len(self._ready)

    def __iter__(self) -> EventStream:
        return self

    def __next__(self):
        while not self._ready:
            if self._done:
                raise StopIteration
            self._read()
        return self._ready.popleft()

    def close(self) -> None:
        self.response.close()

    def _read(self) -> None:
        if self._reads is None:
            self._reads = self.response.iter_bytes()
        try:
            piece = next(self._reads, None)
        except Exception as exc:
            from nanohermes.provider.client import as_api_error

            error = as_api_error(exc)
            if error is exc:
                raise
            raise error from exc
        if piece is None:  # the connection closed: a last event without its blank line still counts
            self._done = True
            self._events(self._partial.decode("utf-8", "replace") + "\n\n")
            return
        data = self._partial + piece
        cut = data.rfind(b"\n") + 1  # whole lines only: a UTF-8 character never spans a newline byte
        self._partial = data[cut:]
        self._events(data[:cut].decode("utf-8", "replace"))

    def _events(self, lines: str) -> None:
        """Whole lines of the stream: the events they end are parsed, an unfinished one kept."""
        events = (self._carry + lines.replace("\r\n", "\n")).split("\n\n")
        self._carry = events.pop()
        for event in events:
            if event.startswith("data: ") and "\n" not in event:  # nearly every event: one data line
                data = event[6:]
            else:  # several data lines; comments (": ping"), `event:`, `id:`, `retry:` carry nothing
                data = "\n".join(_data_lines(event))
                if not data:
                    continue
            if data.startswith(DONE):
                self._done = True
                return
            self._ready.append(_chunk(parse_json(data), self.response))  # nesting past the limit: not JSON


def _data_lines(event: str):
    for line in event.split("\n"):
        if line.startswith("data:"):
            yield line[6:] if line.startswith("data: ") else line[5:]


def _chunk(value, response):
    """A chunk; an `{"error": …}` event raised as an APIError without a status (the server failed mid-reply)."""
    if isinstance(value, dict) and value.get("error"):
        from nanohermes.provider.client import APIError

        error = value["error"]
        message = error.get("message") if isinstance(error, dict) else None
        raise APIError(message if isinstance(message, str) and message else "An error occurred during streaming", error)
    return value
