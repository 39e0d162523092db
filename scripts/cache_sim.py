"""A window-enforcing, prefix-caching OpenAI-compatible server for scripts/bench_cache.py.

It wraps the tests' scripted server (real HTTP, real SSE) with what a real server does to a
long conversation: it counts prompt tokens (o200k, as a chat template would: contents, call
arguments, a few tokens per message, the tool schemas), rejects a request whose prompt plus
max_tokens exceeds the window (llama.cpp's error shape, with n_ctx), reports usage with
`prompt_tokens_details.cached_tokens`, and caches one prefix: the previous request's. A
`Model` decides each reply (the trajectory); a summary request is one without tools or with
tool_choice "none".
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nanohermes.context.cache import common_prefix
from nanohermes.context.tokens import count_tokens
from tests.support.scripted_server import Error, Reply, ScriptedServer, is_summary_request

SUMMARY_MARKS = ("[Earlier conversation",)  # how a summary message starts, whatever its role
MESSAGE_OVERHEAD = 4  # role and start/end markers of a chat template
CALL_OVERHEAD = 3


def message_text(message: dict) -> str:
    """Everything a model reads in one message: content (or its text parts) and call arguments."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    parts = [content or ""]
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        parts.append(f"{function.get('name')}({function.get('arguments')})")
    return "\n".join(parts)


@dataclass
class Exchange:
    """One request as the server saw it."""

    summary: bool
    chars: int  # the request's messages and tools as JSON
    uncached_chars: int  # not a prefix of the previous request
    prompt_tokens: int
    cached_tokens: int
    rejected: bool
    compacted: bool = False  # a main request that does not extend the previous main request


@dataclass
class Meter:
    """Counts what a run sent, what a one-slot prefix cache could reuse, and the floor."""

    window: int
    exchanges: list[Exchange] = field(default_factory=list)
    floor_chars: int = 0
    peak_prompt_tokens: int = 0
    _previous: list[str] = field(default_factory=list)  # the previous request's parts (tools, then messages)
    _previous_main: list[str] = field(default_factory=list)
    _seen: set = field(default_factory=set)
    _tokens: dict = field(default_factory=dict)

    def part_tokens(self, part: str, message: dict | None) -> int:
        if part not in self._tokens:
            if message is None:  # the tool schemas
                self._tokens[part] = count_tokens(part)
            else:
                self._tokens[part] = (
                    MESSAGE_OVERHEAD
                    + count_tokens(message_text(message))
                    + CALL_OVERHEAD * len(message.get("tool_calls") or ())
                )
        return self._tokens[part]

    def measure(self, body: dict) -> Exchange:
        messages = body.get("messages") or []
        tools = json.dumps(body.get("tools") or [], ensure_ascii=False, separators=(",", ":"))
        parts = [tools] + [json.dumps(m, ensure_ascii=False, separators=(",", ":")) for m in messages]
        tokens = [self.part_tokens(tools, None)] + [self.part_tokens(p, m) for p, m in zip(parts[1:], messages)]
        shared_chars = shared_tokens = 0
        for i, (part, n) in enumerate(zip(parts, tokens)):
            if i < len(self._previous) and self._previous[i] == part:
                shared_chars += len(part)
                shared_tokens += n
                continue
            if i < len(self._previous):  # a partial match inside the first differing part
                common = common_prefix(self._previous[i], part)
                shared_chars += common
                shared_tokens += n * common // max(1, len(part))
            break
        prompt_tokens = sum(tokens)
        limit = self.window - int(body.get("max_tokens") or 0)
        summary = is_summary_request(body)
        exchange = Exchange(
            summary,
            sum(map(len, parts)),
            sum(map(len, parts)) - shared_chars,
            prompt_tokens,
            shared_tokens,
            prompt_tokens > limit,
        )
        self._previous = parts
        if not exchange.rejected and not summary:  # a summary request holds nothing new: overhead
            self._count_floor(parts, messages)
            exchange.compacted = (
                bool(self._previous_main) and parts[1 : len(self._previous_main)] != self._previous_main[1:]
            )
            self._previous_main = parts
            self.peak_prompt_tokens = max(self.peak_prompt_tokens, prompt_tokens)
        self.exchanges.append(exchange)
        return exchange

    def _count_floor(self, parts: list[str], messages: list[dict]) -> None:
        """Every new message once: the tools and the system message when first seen, each
        user message, each assistant reply (by its call ids or text) and each tool result (by
        its call id). Summaries and rewrites of old messages are the policy's overhead."""
        for i, (part, message) in enumerate(zip(parts, [None, *messages])):
            role = message.get("role") if message else "tools"
            content = message.get("content") if message else None
            if role == "user" and isinstance(content, str) and content.startswith(SUMMARY_MARKS):
                continue
            if role == "tool":
                identity = ("tool", str(message.get("tool_call_id")))
            elif role == "assistant" and message.get("tool_calls"):
                identity = ("assistant", tuple(str(c.get("id")) for c in message["tool_calls"]))
            elif role == "system" and i > 1:
                continue  # a summary as a second system message
            else:
                identity = (role, part)
            if identity not in self._seen:
                self._seen.add(identity)
                self.floor_chars += len(part)


class Model:
    """The trajectory: what the "model" answers. Subclasses decide main replies."""

    def main_reply(self, body: dict) -> Reply:
        raise NotImplementedError

    def summary_reply(self, body: dict) -> Reply:
        raise NotImplementedError


class CacheServer:
    """A ScriptedServer whose replies come from `model`, measured by a Meter."""

    def __init__(self, model: Model, window: int, advertise: bool = True):
        self.model, self.meter = model, Meter(window)
        self.server = ScriptedServer(n_ctx=window if advertise else None)
        self.server.handler = self._handle
        self.on_compaction = lambda body: None

    @property
    def url(self) -> str:
        return self.server.url

    def _handle(self, body: dict):
        exchange = self.meter.measure(body)
        if exchange.rejected:
            message = (
                f"request ({exchange.prompt_tokens} tokens) exceeds the available context size "
                f"({self.meter.window} tokens), try increasing it"
            )
            return Error(
                400,
                {
                    "error": {
                        "code": 400,
                        "message": message,
                        "type": "exceed_context_size_error",
                        "n_prompt_tokens": exchange.prompt_tokens,
                        "n_ctx": self.meter.window,
                    }
                },
            )
        if exchange.compacted:
            self.on_compaction(body)
        reply = self.model.summary_reply(body) if exchange.summary else self.model.main_reply(body)
        reply.usage = {
            "prompt_tokens": exchange.prompt_tokens,
            "completion_tokens": 50,
            "prompt_tokens_details": {"cached_tokens": exchange.cached_tokens},
        }
        return reply

    def close(self) -> None:
        self.server.close()
