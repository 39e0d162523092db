"""A scripted OpenAI-compatible server on 127.0.0.1 for tests: real HTTP, real SSE.

Each request to /v1/chat/completions takes the next scripted reply (or asks `handler(body)`
when the script is empty). Replies stream in the exact `chat.completion.chunk` format, with
text and tool-call arguments split across many chunks, and a final usage chunk; a
non-streaming request gets the same reply as one `chat.completion`. Every request body is
logged in `requests` for assertions. `routes` answer other paths as a server's own API does
("GET /api/version", "POST /api/show": a body, or fn(request body) -> (status, body)), before
any script is consumed; those requests are logged in `native`.

`vision`: the server as llama.cpp says whether it takes images (GET /props `modalities.vision`;
None: no /props). Every chat request's content parts are checked as a server taking images
checks them (tests/support/images.py): a malformed part, or any image part at a server without
vision, is answered HTTP 400 as llama.cpp answers it, and recorded in `refused`.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_CALL_NUMBERS = itertools.count(1)


@dataclass
class Reply:
    content: str = ""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)  # (name, arguments json)
    finish_reason: str | None = None
    usage: dict | None = field(default_factory=lambda: {"prompt_tokens": 100, "completion_tokens": 10})
    content_empty_string: bool = False  # llama.cpp sends content "" beside tool_calls
    chunk_size: int = 7
    delay: float = 0.0  # seconds between chunks (before the whole reply, when not streamed)
    first_delay: float = 0.0  # seconds after the headers before the first chunk (a slow prompt)
    drop_after: int | None = None  # close the connection after this many chunks


@dataclass
class Error:
    status: int
    body: dict | str = ""
    headers: dict = field(default_factory=dict)


@dataclass
class RawSSE:
    """Chunks replayed verbatim (recorded from a real server)."""

    chunks: list[dict]


def prompt_tokens(body: dict) -> int:
    """The prompt size a server would report for this request: o200k tokens of every message
    (contents and call arguments, 4 per message for the chat template) and of the tool schemas."""
    from nanohermes.context import count_tokens

    total = count_tokens(json.dumps(body.get("tools") or []))
    for message in body.get("messages") or []:
        content = message.get("content")
        total += 4 + count_tokens(content if isinstance(content, str) else json.dumps(content or ""))
        total += sum(3 + count_tokens(c["function"]["arguments"] or "") for c in message.get("tool_calls") or ())
    return total


def is_summary_request(body: dict) -> bool:
    """A compaction's summary request: the conversation with tool calls off, or no tools at all."""
    return body.get("tool_choice") == "none" or not body.get("tools")


def prose(chars: int, word: str = "word") -> str:
    """`chars` chars of text that never repeats itself (`word0 word1 …`): a long reply that is no
    loop, which the stream would cut (provider/runaway.py)."""
    pieces, total, i = [], 0, 0
    while total < chars:
        pieces.append(f"{word} {i}. " if " " in word else f"{word}{i} ")
        total += len(pieces[-1])
        i += 1
    return "".join(pieces)[:chars]


def text(content: str, **kw) -> Reply:
    return Reply(content=content, **kw)


def call(name: str, arguments: dict | str, content: str = "", **kw) -> Reply:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Reply(content=content, tool_calls=[(name, args)], **kw)


def calls(*pairs: tuple[str, dict | str], **kw) -> Reply:
    return Reply(tool_calls=[(n, a if isinstance(a, str) else json.dumps(a)) for n, a in pairs], **kw)


def _pieces(s: str, n: int) -> list[str]:
    return [s[i : i + n] for i in range(0, len(s), n)] or [""]


def _total(usage: dict) -> int:
    return (usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)


def stream_chunks(reply: Reply, model: str) -> list[dict]:
    base = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": model}

    def chunk(delta, finish=None):
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": "" if reply.content_empty_string else None})]
    if reply.content:
        out += [chunk({"content": p}) for p in _pieces(reply.content, reply.chunk_size)]
    for i, (name, args) in enumerate(reply.tool_calls):
        call_id = f"call_{i}_{next(_CALL_NUMBERS)}"  # unique, like a real server's ids
        head = {"index": i, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        out.append(chunk({"tool_calls": [head]}))
        for p in _pieces(args, reply.chunk_size):
            out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]}))
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    out.append(chunk({}, finish))
    if reply.usage is not None:
        usage = {"total_tokens": _total(reply.usage), **reply.usage}  # a recorded shape's own total kept
        out.append({**base, "choices": [], "usage": usage})
    return out


def completion(reply: Reply, model: str) -> dict:
    message: dict = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{i}_{next(_CALL_NUMBERS)}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(reply.tool_calls)
        ]
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason or "stop"}],
    }
    if reply.usage is not None:
        body["usage"] = {"total_tokens": _total(reply.usage), **reply.usage}
    return body


# serve_forever's shutdown() waits up to one poll interval: the default 0.5 s cost each test half a second.
POLL = 0.02


class ScriptedServer:
    def __init__(self, n_ctx: int | None = None, port: int = 0, vision: bool | None = None):
        self.vision = vision
        self.refused: list[str] = []  # why a chat request's content parts were refused
        self.script: deque = deque()
        self.requests: list[dict] = []
        self.handler = None  # fn(body) -> Reply | Error, used when the script is empty
        self.n_ctx = n_ctx  # advertised like llama.cpp's /v1/models meta.n_ctx
        self.abandoned: list[tuple[int, int]] = []  # (chunks sent, chunks scripted) of streams the client left
        self.routes: dict[str, object] = {}  # "METHOD /path" -> body or fn(body) -> (status, body)
        self.native: list[tuple[str, dict | None]] = []  # ("METHOD /path", body) of the routes' requests
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._make_handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(POLL,), daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def add(self, *replies) -> ScriptedServer:
        self.script.extend(replies)
        return self

    def chat_requests(self) -> list[dict]:
        return [r for r in self.requests if "messages" in r]

    def check_parts(self, body: dict) -> str:
        """Why a chat request's content parts are refused ("" when they are not)."""
        from tests.support.images import image_parts, part_problems

        problems = part_problems(body)
        if image_parts(body) and not self.vision:  # llama.cpp's words without a projector
            problems.append(
                "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"
            )
        if problems:
            with self._lock:
                self.requests.append(body)
                self.refused.append("; ".join(problems))
        return "; ".join(problems)

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self, body: dict):
        with self._lock:
            self.requests.append(body)
            if self.script:
                return self.script.popleft()
        if self.handler is not None:
            return self.handler(body)
        return Error(500, {"error": {"message": "scripted server: script exhausted", "type": "server_error"}})

    def _make_handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args):
                pass

            def _json(self, status: int, body, headers: dict | None = None):
                data = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _route(self, method: str, body: dict | None) -> bool:
                key = f"{method} {self.path.split('?')[0]}"
                if key not in server.routes:
                    return False
                server.native.append((key, body))
                answer = server.routes[key]
                status, reply = answer(body) if callable(answer) else (200, answer)
                self._json(status, reply)
                return True

            def do_GET(self):
                if self._route("GET", None):
                    return
                if self.path == "/props" and server.vision is not None:
                    self._json(200, {"modalities": {"vision": server.vision, "audio": False}, "total_slots": 1})
                elif self.path.rstrip("/").endswith("/models"):
                    model = {"id": "test-model", "object": "model", "owned_by": "test"}
                    if server.n_ctx:
                        model["meta"] = {"n_ctx": server.n_ctx}
                    self._json(200, {"object": "list", "data": [model]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self._route("POST", body):
                    return
                if refusal := server.check_parts(body):
                    return self._json(
                        400, {"error": {"code": 400, "message": refusal, "type": "invalid_request_error"}}
                    )
                reply = server._next(body)
                model = body.get("model", "test-model")
                if isinstance(reply, Error):
                    return self._json(reply.status, reply.body, reply.headers)
                if not body.get("stream"):
                    time.sleep(getattr(reply, "delay", 0.0))  # a slow summariser
                    return self._json(200, completion(reply, model))
                chunks = reply.chunks if isinstance(reply, RawSSE) else stream_chunks(reply, model)
                delay = getattr(reply, "delay", 0.0)
                drop_after = getattr(reply, "drop_after", None)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.flush()
                time.sleep(getattr(reply, "first_delay", 0.0))
                try:
                    for i, chunk in enumerate(chunks):
                        if drop_after is not None and i >= drop_after:
                            return  # connection closes mid-stream
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        if delay:
                            time.sleep(delay)
                    self.wfile.write(b"data: [DONE]\n\n")
                except (BrokenPipeError, ConnectionResetError):
                    server.abandoned.append((i, len(chunks)))

        return Handler


def serving(server: ScriptedServer, models: list[str]) -> ScriptedServer:
    """The server as a multi-model one (Ollama, vLLM with several): GET /models lists `models`,
    a request for one of them is answered "ok", one for any other name refused with a 404."""
    server.routes["GET /v1/models"] = {"object": "list", "data": [{"id": m, "object": "model"} for m in models]}

    def answer(body):
        if body["model"] in models:
            return text("ok")
        return Error(404, {"error": {"message": f"model '{body['model']}' not found", "type": "not_found_error"}})

    server.handler = answer
    return server


def without_v1(server: ScriptedServer) -> str:
    """The server as vLLM or a FastAPI app answers where /v1 is missing: a JSON 404
    (`{"detail": "Not Found"}`) for GET /models and POST /chat/completions; its API stays at
    /v1. Returns the base URL without /v1."""
    not_found = lambda body: (404, {"detail": "Not Found"})  # noqa: E731
    server.routes["GET /models"] = server.routes["POST /chat/completions"] = not_found
    return server.url.removesuffix("/v1")
