"""What a prompt cache can reuse: per request, the chars not shared as a prefix with the
previous request (the tool schemas first, then the messages, as providers lay them out)."""

from __future__ import annotations

import json

from nanohermes.context.budget import SizeCache, message_size

# PrefixMeter.changed: where a request first differed from the one before.
TOOLS, SYSTEM, MESSAGES = "tools", "system", "messages"


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix (binary search over slice compares)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


class PrefixMeter:
    """measure(tools, messages) -> (chars sent, chars not a prefix of the previous request).

    Messages are compared by identity first (the loop reuses the dicts of an unchanged prefix),
    so a request costs one pass over sizes plus one JSON comparison where they first differ."""

    def __init__(self) -> None:
        self._sizes = SizeCache()
        self._tools = ""
        self._messages: list[tuple[dict, object, object]] = []
        # The first part of the latest request that was not the previous one's (a cache miss's
        # cause): None when it only added messages after them; TOOLS, SYSTEM or MESSAGES.
        self.changed: str | None = None

    def measure(self, tools: list[dict], messages: list[dict]) -> tuple[int, int]:
        tools_json = _json(tools)
        sent = len(tools_json) + self._sizes.total(messages)
        shared = common_prefix(self._tools, tools_json)
        self.changed = TOOLS
        if shared == len(tools_json) == len(self._tools):
            self.changed = None
            for i, message in enumerate(messages):
                if i < len(self._messages) and self._same(i, message):
                    shared += self._sizes.size(message)
                    continue
                if i < len(self._messages):
                    shared += common_prefix(_json(self._messages[i][0]), _json(message))
                    self.changed = SYSTEM if i == 0 else MESSAGES
                break
            else:
                self.changed = MESSAGES if len(messages) < len(self._messages) else None
        self._tools = tools_json
        self._messages = [(m, m.get("content"), m.get("tool_calls")) for m in messages]
        self._sizes.forget_all_but(messages)
        return sent, sent - shared

    def _same(self, i: int, message: dict) -> bool:
        old, content, calls = self._messages[i]
        if old is message and message.get("content") is content and message.get("tool_calls") is calls:
            return True
        return message_size(old) == message_size(message) and old == message
