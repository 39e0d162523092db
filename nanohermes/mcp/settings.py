"""`[mcp.servers.NAME]` tables of config.toml, checked once when the configuration is loaded.

    [mcp.servers.files]                       # stdio: a command the client starts
    command = "npx"
    args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
    env = { LOG_LEVEL = "warn" }              # added to a minimal environment (PATH, HOME, …)
    trusted = true                            # its calls run without asking

    [mcp.servers.tracker]                     # streamable HTTP
    url = "https://mcp.example.com/mcp"
    headers = { Authorization = "Bearer ${TRACKER_TOKEN}" }
    protocol_version = "2026-07-28"           # pin the newest protocol (default: HANDSHAKE_VERSION)

`${VAR}` in args, env, url and headers is taken from the environment when the server starts
(so secrets stay out of the file); an unset variable makes that server fail with a clear error.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from nanohermes.config import checked_seconds, checked_table
from nanohermes.errors import ConfigError
from nanohermes.fileio import read_regular
from nanohermes.redact import CREDENTIAL_HEADERS, SECRET_NAME

MAX_TOKEN_FILE_BYTES = 65_536  # tokens and a registration are a few KB; a bigger file is not ours
DEFAULT_CALL_TIMEOUT_S = 60.0  # a tool call past a minute is hung or doing a job too big for a tool call
DEFAULT_STARTUP_TIMEOUT_S = 30.0  # `npx -y …` may download its package on the first start
SERVER_KEYS = frozenset(
    {"command", "args", "env", "cwd", "url", "headers", "trusted", "enabled", "timeout", "startup_timeout", "sandbox"}
    | {"oauth", "protocol_version"}
)
# The protocol a server is spoken to in. The newest revision reached by the `initialize` handshake
# (the SDK's mode="legacy") is the last where a server may send requests of its own mid-call:
# roots/list, elicitation/create, sampling/createMessage. On 2026-07-28 (what the SDK's default
# mode="auto" picks with any SDK 2.x server) the SDK refuses them ("no back-channel"), so a server
# that asks with ctx.elicit() or ctx.session.list_roots() fails; only its input-required results
# (MCPServer's Resolve) still reach the client. So the handshake is the default, and 2026-07-28
# (or "auto", the SDK's own choice) is a pin; a server that refuses the handshake gets "auto".
HANDSHAKE_VERSION = "2025-11-25"  # mcp_types.version.LATEST_HANDSHAKE_VERSION (a test checks it)
MODERN_VERSION = "2026-07-28"  # mcp_types.version.LATEST_MODERN_VERSION
AUTO = "auto"
PROTOCOL_VERSIONS = (HANDSHAKE_VERSION, MODERN_VERSION, AUTO)
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")  # `${NAME}`, as transport.expand reads it
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")  # no dots: `server.tool` names a tool


@dataclass(frozen=True)
class McpServerSettings:
    name: str
    command: str | None = None  # stdio
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # values may be secrets
    cwd: str | None = None  # default: the workspace
    url: str | None = None  # streamable HTTP
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    trusted: bool = False  # calls run without asking, in every mode but plan
    sandbox: bool = False  # a stdio server run inside the session's sandbox (opt-in: many need the network)
    oauth: bool = False  # an HTTP server reached with the tokens of `nanohermes mcp login NAME` (oauth.py)
    token_file: str | None = field(default=None, repr=False)  # with oauth: where its tokens are kept
    timeout: float = DEFAULT_CALL_TIMEOUT_S
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT_S
    protocol_version: str | None = None  # a pin (PROTOCOL_VERSIONS); None: the handshake, else what the server speaks

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    def describe(self) -> str:
        """`stdio: npx -y @x/server .` or `http: https://…`, for listings (never env or headers)."""
        if self.url:
            return f"http: {self.url}"
        return "stdio: " + " ".join([self.command or "", *self.args])

    def secrets(self) -> list[tuple[str, str]]:
        """For redact.py: the env values and headers named like credentials (an `Authorization`
        header's credentials without their scheme word), with ${VAR} read from the environment
        as the server's start will (an unset one is no secret yet); and every ${VAR}'s value read
        for args, env, url or headers: a value kept out of config.toml is kept out of results too."""
        where = f"mcp.servers.{self.name}"
        found = [(f"{where}.env.{key}", value) for key, value in self.env if SECRET_NAME.search(key)]
        for key, value in self.headers:
            if key.lower() in CREDENTIAL_HEADERS or SECRET_NAME.search(key.replace("-", "_")):
                found += [(f"{where}.headers.{key}", value), (f"{where}.headers.{key}", value.split(" ", 1)[-1])]
        expanded = [(name, os.path.expandvars(value)) for name, value in found]
        read = [*self.args, *(v for _, v in self.env), *(v for _, v in self.headers), self.url or ""]
        variables = {name for text in read for name in VARIABLE.findall(text)}
        return (
            [(name, value) for name, value in expanded if "${" not in value]
            + [(f"${{{name}}}", os.environ[name]) for name in sorted(variables) if name in os.environ]
            + [(f"{where}.oauth", token) for token in self._stored_tokens()]
        )

    def _stored_tokens(self) -> list[str]:
        """The OAuth tokens kept for it as the session starts (those refreshed later are not known here)."""
        if not self.oauth or not self.token_file:
            return []
        try:
            data = json.loads(read_regular(self.token_file, MAX_TOKEN_FILE_BYTES).decode("utf-8"))
            tokens = data.get("tokens") or {}
            return [str(tokens[k]) for k in ("access_token", "refresh_token") if tokens.get(k)]
        except (OSError, ValueError, AttributeError):
            return []

    def fingerprint(self) -> str:
        """What identifies the server's tool list between runs: the program and the address
        (not env or headers, which hold secrets and rarely change the tools)."""
        data = json.dumps([self.command, list(self.args), self.url], separators=(",", ":"))
        return hashlib.sha256(data.encode()).hexdigest()[:16]


def token_path(home: Path, name: str) -> Path:
    """Where `nanohermes mcp login NAME` keeps a server's OAuth tokens (oauth.py)."""
    return Path(home) / "mcp" / "oauth" / f"{name}.json"


def parse_mcp_table(table, path: Path) -> tuple[McpServerSettings, ...]:
    """`[mcp]` as the enabled servers' settings, or a ConfigError naming the key to fix."""
    if not isinstance(table, dict) or set(table) - {"servers"}:
        raise ConfigError(f'{path}: [mcp] holds only servers tables, e.g. [mcp.servers.files] with command = "…".')
    servers = table.get("servers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: mcp.servers must be tables, e.g. [mcp.servers.files].")
    parsed = [_server(name, entry, path) for name, entry in servers.items()]
    return tuple(s for s, enabled in parsed if enabled)


def _server(name: str, entry, path: Path) -> tuple[McpServerSettings, bool]:
    where = f"{path} [mcp.servers.{name}]"
    if not _NAME.match(name):
        raise ConfigError(f"{where}: a server name is letters, digits, '_' and '-' (up to 40), no dots.")
    checked_table(entry, SERVER_KEYS, where, f"{where} must be a table.")
    if ("command" in entry) == ("url" in entry):
        raise ConfigError(f"{where} needs either command (a stdio server) or url (streamable HTTP), not both.")
    if "command" in entry and entry.get("oauth"):
        raise ConfigError(f"{where}: oauth applies to a server reached by url, not to a stdio command.")
    if "url" in entry and entry.get("sandbox"):
        raise ConfigError(f"{where}: sandbox applies to a stdio server (command), not to one reached by url.")
    if "url" in entry and not str(entry["url"]).startswith(("http://", "https://", "${")):
        raise ConfigError(f"{where}: url must be an http(s) URL, got {entry['url']!r}.")
    settings = McpServerSettings(
        name=name,
        command=_text(entry, "command", where),
        args=tuple(_strings(entry, "args", where)),
        env=_pairs(entry, "env", where),
        cwd=_text(entry, "cwd", where),
        url=_text(entry, "url", where),
        headers=_pairs(entry, "headers", where),
        trusted=_flag(entry, "trusted", False, where),
        sandbox=_flag(entry, "sandbox", False, where),
        oauth=_flag(entry, "oauth", False, where),
        token_file=str(token_path(path.parent, name)),
        timeout=checked_seconds(entry, "timeout", DEFAULT_CALL_TIMEOUT_S, where),
        startup_timeout=checked_seconds(entry, "startup_timeout", DEFAULT_STARTUP_TIMEOUT_S, where),
        protocol_version=_protocol_version(entry, where),
    )
    return settings, _flag(entry, "enabled", True, where)


def _protocol_version(entry: dict, where: str) -> str | None:
    value = entry.get("protocol_version")
    if value is not None and value not in PROTOCOL_VERSIONS:
        known = ", ".join(f'"{v}"' for v in PROTOCOL_VERSIONS)
        raise ConfigError(f"{where}: protocol_version must be one of {known}; got {value!r}.")
    return value


def _text(entry: dict, key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ConfigError(f"{where}: {key} must be a non-empty string.")
    return value


def _strings(entry: dict, key: str, where: str) -> list[str]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f'{where}: {key} must be a list of strings, e.g. {key} = ["-y", "server"].')
    return value


def _pairs(entry: dict, key: str, where: str) -> tuple[tuple[str, str], ...]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f'{where}: {key} must be a table of strings, e.g. {key} = {{ NAME = "value" }}.')
    return tuple(value.items())


def _flag(entry: dict, key: str, default: bool, where: str) -> bool:
    value = entry.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: {key} must be true or false.")
    return value
