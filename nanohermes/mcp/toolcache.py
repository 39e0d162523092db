"""Each MCP server's tool list, kept between runs in `$NANOHERMES_HOME/mcp/tools.json` (0600).

The prompt lists the servers' tools, and it is built when a session starts, before any server
runs (servers start on first use; the prompt changes mid-session only when a server announces
that its tools changed, for prompt caches). Its `instructions` are kept beside its tools.
So the list a server gave the last time it was started (by a session or `nanohermes mcp
list`) is what the next session's prompt shows. An entry is dropped when the server's
program or address changes (its fingerprint). Two processes saving at once may lose one
write; the next start of that server writes it again.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from nanohermes.fileio import read_regular
from nanohermes.mcp.settings import McpServerSettings

FORMAT_VERSION = 1
MAX_TOOLS_PER_SERVER = 200  # a server offering more is a catalogue; the rest stay reachable by name
MAX_INSTRUCTIONS_CHARS = 4_000  # kept whole enough for the prompt's cut (listing.py) and no more
MAX_CACHE_BYTES = 16 * 2**20  # far above 200 tools of every server; a bigger file is not ours: ignored


@dataclass(frozen=True)
class McpToolInfo:
    name: str
    description: str = ""
    input_schema: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    @classmethod
    def from_dict(cls, data: dict) -> McpToolInfo:
        schema = data.get("input_schema")
        return cls(str(data["name"]), str(data.get("description") or ""), schema if isinstance(schema, dict) else {})


class ToolCache:
    def __init__(self, home: Path):
        self.path = Path(home) / "mcp" / "tools.json"

    def load(self, server: McpServerSettings) -> list[McpToolInfo] | None:
        """The server's tools as last listed; None when it never was (or its program changed)."""
        entry = self._read().get(server.name)
        if not isinstance(entry, dict) or entry.get("fingerprint") != server.fingerprint():
            return None
        try:
            return [McpToolInfo.from_dict(t) for t in entry.get("tools") or []]
        except (KeyError, TypeError, AttributeError):
            return None

    def instructions(self, server: McpServerSettings) -> str:
        """The server's `instructions` as last given ("" when none, or never started)."""
        entry = self._read().get(server.name)
        if not isinstance(entry, dict) or entry.get("fingerprint") != server.fingerprint():
            return ""
        return str(entry.get("instructions") or "")[:MAX_INSTRUCTIONS_CHARS]

    def save(self, server: McpServerSettings, tools: list[McpToolInfo], instructions: str = "") -> None:
        """Keep this list for the next sessions. A cache that cannot be written is no error:
        the next session lists the server as not listed yet."""
        servers = self._read()
        servers[server.name] = {
            "fingerprint": server.fingerprint(),
            "tools": [t.to_dict() for t in tools[:MAX_TOOLS_PER_SERVER]],
            "instructions": instructions[:MAX_INSTRUCTIONS_CHARS],
        }
        data = json.dumps({"version": FORMAT_VERSION, "servers": servers}, ensure_ascii=False).encode("utf-8")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            tmp = self.path.with_name(f".tools.{secrets.token_hex(4)}.tmp")
            with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
                f.write(data)
            os.replace(tmp, self.path)
        except OSError:
            pass

    def _read(self) -> dict:
        try:
            raw = read_regular(self.path, MAX_CACHE_BYTES + 1)  # a FIFO or device there must not hang the start
            data = json.loads(raw.decode("utf-8")) if len(raw) <= MAX_CACHE_BYTES else {}
        except (OSError, ValueError):
            return {}
        servers = data.get("servers") if isinstance(data, dict) else None
        return servers if isinstance(servers, dict) else {}
