"""Secrets are never stored or sent: the configured API key, and the value of every setting or
environment variable named like a key or token (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, …), are
replaced by `[redacted: NAME]` in tool results and messages before the session file, the
context or the provider sees them.

Commands already run without OPENAI_API_KEY in their environment, but a command can still
read it elsewhere (`tr '\\0' '\\n' < /proc/$PPID/environ`), and a user may paste one.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields

# Names that hold secrets: api_key, OPENAI_API_KEY, GITHUB_TOKEN, DB_PASSWORD; not max_tokens.
SECRET_NAME = re.compile(r"(^|_)(api_?key|key|token|secret|password|passwd|credentials?)$", re.IGNORECASE)
MIN_SECRET_CHARS = 8  # a shorter value would redact ordinary words ("local", "true")
# Values that are not secret although their setting's name says key (the local-server placeholder).
NOT_SECRET = frozenset({"no-key-needed"})


@dataclass(frozen=True)
class Redactor:
    """Replaces each secret value (longest first, so one containing another is taken whole).
    A settings table held by the config names its own secrets with a `secrets()` method:
    (name, value) pairs."""

    secrets: tuple[tuple[str, str], ...] = field(default=())  # (name, value)

    @classmethod
    def for_config(cls, config=None, environ=None) -> Redactor:
        """The secrets of `config` (a Config; None: the environment's only) and of the environment."""
        found: dict[str, str] = {}
        for f in fields(config) if config is not None else ():
            value = getattr(config, f.name)
            if SECRET_NAME.search(f.name) and isinstance(value, str):
                found.setdefault(value, f.name)
            for table in value if isinstance(value, tuple) else (value,):  # [web_search], [mcp.servers.NAME]
                for name, secret in table.secrets() if hasattr(table, "secrets") else ():
                    found.setdefault(secret, name)
        for name, value in (os.environ if environ is None else environ).items():
            if SECRET_NAME.search(name):
                found.setdefault(value, name)
        kept = [
            (name, value) for value, name in found.items() if len(value) >= MIN_SECRET_CHARS and value not in NOT_SECRET
        ]
        return cls(tuple(sorted(kept, key=lambda item: -len(item[1]))))

    def text(self, text: str) -> str:
        for name, value in self.secrets:
            if value in text:
                text = text.replace(value, f"[redacted: {name}]")
        return text

    def message(self, message: dict) -> dict:
        """A chat message with its text, content parts and tool-call arguments redacted (a new
        dict when anything changed; the same one otherwise)."""
        if not self.secrets:
            return message
        changed = dict(message)
        content = message.get("content")
        if isinstance(content, str):
            changed["content"] = self.text(content)
        elif isinstance(content, list):
            changed["content"] = [
                {**p, "text": self.text(p["text"])} if isinstance(p, dict) and isinstance(p.get("text"), str) else p
                for p in content
            ]
        if message.get("tool_calls"):
            changed["tool_calls"] = [self._call(c) for c in message["tool_calls"]]
        return changed if changed != message else message

    def _call(self, call: dict) -> dict:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str) or self.text(arguments) == arguments:
            return call
        return {**call, "function": {**function, "arguments": self.text(arguments)}}


NO_SECRETS = Redactor()
