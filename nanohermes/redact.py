"""Secrets are never stored or sent: the configured API key, and the value of every setting or
environment variable named like a key, password, secret or token (GITHUB_TOKEN, DB_PASS,
OPENAI_API_KEY_2, SECRET_KEY_BASE, a DATABASE_URL or any *_URL holding credentials), are replaced
by `[redacted: NAME]` wherever they would leave the process: what the provider is sent (provider/),
what a session, memory or crash log keeps (loop/transcript.py, memory/store.py, crash.py), and what
a client is shown of a running tool or a streamed reply (loop/execute.py, StreamGuard below).

A value is also found after re-encoding that puts a backslash before punctuation (Markdown
escaping in a converted web page: `ghp\\_…`, JSON's `\\/`).

Commands already run without OPENAI_API_KEY in their environment, but a command can still
read it elsewhere (`tr '\\0' '\\n' < /proc/$PPID/environ`), and a user may paste one.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields
from urllib.parse import urlsplit

# Names that hold secrets: api_key, OPENAI_API_KEY_2, GITHUB_TOKEN, DB_PASS, DB_PASSWORD,
# SECRET_KEY_BASE, AWS_SECRET_ACCESS_KEY; not max_tokens (an int) or LOG_LEVEL.
SECRET_NAME = re.compile(
    r"(^|_)(api_?key|key|credentials?)($|_)|_key|_pass|password|passwd|secret|token", re.IGNORECASE
)
# Where a secret is kept is not itself one (SECRET_KEY_FILE=/run/secrets/key, TIKTOKEN_CACHE_DIR).
LOCATION_NAME = re.compile(r"_(file|dir|path)$", re.IGNORECASE)
# Addresses whose whole value is a credential, whatever it holds (a DSN may carry its password
# as a query parameter); any other *_URL is a secret only when it holds user:password@.
CREDENTIAL_URL_NAMES = frozenset({"database_url"})
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
MIN_SECRET_CHARS = 8  # a shorter value would redact ordinary words ("local", "true")
MAX_STATE_SECRET_FILES = 200  # OAuth files under $NANOHERMES_HOME/mcp/oauth: one per server
MAX_STATE_SECRET_BYTES = 1_000_000  # one such file holds a registration and tokens: a few KB
# Values that are not secret although their setting's name says key (the local-server placeholder).
NOT_SECRET = frozenset({"no-key-needed"})


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name)) and not LOCATION_NAME.search(name)


def secrets_of_variable(name: str, value: str) -> list[tuple[str, str]]:
    """The (name, value) pairs an environment variable or setting holds: its value when its name
    says secret; a URL's password (and the URL) when the URL carries credentials."""
    if not isinstance(value, str):
        return []
    if is_secret_name(name) or name.lower() in CREDENTIAL_URL_NAMES:
        return [(name, value), *_url_password(name, value)]
    if name.lower().endswith("url") and (password := _url_password(name, value)):
        return [(name, value), *password]
    return []


def secrets_in_table(table: dict, where: str = "") -> list[tuple[str, str]]:
    """The secrets of a TOML table as read, nested tables included (a credential header's value
    with and without its scheme word): for when no Config could be built (crash.py)."""
    found: list[tuple[str, str]] = []
    for key, value in table.items():
        name = f"{where}{key}"
        if isinstance(value, dict):
            found += secrets_in_table(value, f"{name}.")
        elif isinstance(value, str) and key.lower() in CREDENTIAL_HEADERS:
            found += [(name, value), (name, value.split(" ", 1)[-1])]
        elif isinstance(value, str):
            found += secrets_of_variable(key, value)
    return found


def state_secrets(home) -> list[tuple[str, str]]:
    """The secrets NanoHermes keeps in its state directory: each MCP server's OAuth registration and
    tokens (`mcp/oauth/NAME.json`: client_secret, access and refresh tokens), named after the file."""
    import json
    from pathlib import Path

    from nanohermes.fileio import read_regular

    found: list[tuple[str, str]] = []
    folder = Path(home) / "mcp" / "oauth"
    try:
        files = sorted(folder.glob("*.json"))[:MAX_STATE_SECRET_FILES]
    except OSError:
        return found
    for path in files:
        try:
            data = json.loads(read_regular(path, MAX_STATE_SECRET_BYTES).decode("utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(data, dict):
            found += secrets_in_table(data, f"mcp oauth {path.stem}.")
    return found


def _url_password(name: str, value: str) -> list[tuple[str, str]]:
    try:
        password = urlsplit(value.strip()).password if "@" in value else None
    except ValueError:
        return []
    return [(name, password)] if password else []


_ESCAPE = re.compile(r"\\(?=[^\w\s]|_)")  # a backslash that escapes punctuation


def _escapable(value: str) -> re.Pattern:
    """`value`, also with a backslash before any of its punctuation (Markdown and JSON escaping)."""
    return re.compile("".join(re.escape(c) if c.isalnum() else r"\\?" + re.escape(c) for c in value))


def _anchor(value: str) -> str:
    """The longest run of letters and digits: escaping never changes it, so a text without it
    cannot hold the value in any form (a cheap test before the regex)."""
    return max(re.findall(r"[^\W_]+", value) or [value], key=len)


@dataclass(frozen=True)
class Redactor:
    """Replaces each secret value (longest first, so one containing another is taken whole).
    A settings table held by the config names its own secrets with a `secrets()` method:
    (name, value) pairs."""

    secrets: tuple[tuple[str, str], ...] = field(default=())  # (name, value)

    def __post_init__(self):
        compiled = tuple((name, value, _anchor(value), _escapable(value)) for name, value in self.secrets)
        object.__setattr__(self, "_compiled", compiled)
        firsts = "".join(sorted({value[0] for _, value in self.secrets} | {"\\"}))
        object.__setattr__(self, "_starts", re.compile(f"[{re.escape(firsts)}]"))

    @classmethod
    def of(cls, pairs) -> Redactor:
        """From (name, value) pairs: short, placeholder and repeated values dropped, longest first."""
        found: dict[str, str] = {}
        for name, value in pairs:
            if isinstance(value, str) and len(value) >= MIN_SECRET_CHARS and value not in NOT_SECRET:
                found.setdefault(value, name)
        return cls(tuple(sorted(((name, value) for value, name in found.items()), key=lambda item: -len(item[1]))))

    @classmethod
    def for_config(cls, config=None, environ=None) -> Redactor:
        """The secrets of `config` (a Config; None: the environment's only) and of the environment."""
        pairs: list[tuple[str, str]] = []
        for f in fields(config) if config is not None else ():
            value = getattr(config, f.name)
            pairs += secrets_of_variable(f.name, value)
            for table in value if isinstance(value, tuple) else (value,):  # [web_search], [mcp.servers.NAME]
                pairs += table.secrets() if hasattr(table, "secrets") else ()
        for name, value in (os.environ if environ is None else environ).items():
            pairs += secrets_of_variable(name, value)
        if config is not None and getattr(config, "home", None) is not None:
            pairs += state_secrets(config.home)
        return cls.of(pairs)

    def plus(self, pairs) -> Redactor:
        return Redactor.of([*self.secrets, *pairs])

    def text(self, text: str) -> str:
        for name, _value, anchor, pattern in self._compiled:
            if anchor in text:
                text = pattern.sub(f"[redacted: {name}]".replace("\\", r"\\"), text)
        return text

    def holds_secret(self, text: str) -> str | None:
        """The name of a secret `text` holds (in any escaped form), else None."""
        return next((name for name, _v, anchor, p in self._compiled if anchor in text and p.search(text)), None)

    def open_tail(self, text: str) -> int:
        """How many chars at the end of `text` could be the start of a secret (0: none): a stream
        holds them back until the next piece says whether the secret completes. Linear in the
        longest secret, whatever came before (a reply of many tiny pieces stays cheap)."""
        if not self.secrets:
            return 0
        window = text[-2 * len(self.secrets[0][1]) :]  # the longest secret, every char escaped
        for start in self._starts.finditer(window):
            tail = window[start.start() :]
            if "\\" in tail:
                tail = _ESCAPE.sub("", tail).removesuffix("\\")
            if tail and any(value.startswith(tail) for _, value in self.secrets):
                return len(window) - start.start()
        return 0

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


class StreamGuard:
    """A streamed text passed on redacted, piece by piece: a secret split across pieces is never
    let out, because a tail that could begin one is held until the next piece or `flush()`."""

    def __init__(self, redactor: Redactor):
        self.redactor, self.held = redactor, ""

    def feed(self, piece: str) -> str:
        """What may be shown now of `piece` (with what was held before it)."""
        text = self.redactor.text(self.held + piece)
        keep = self.redactor.open_tail(text)
        self.held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def flush(self) -> str:
        """The end of the stream: what was held, redacted."""
        text, self.held = self.held, ""
        return self.redactor.text(text)


NO_SECRETS = Redactor()
