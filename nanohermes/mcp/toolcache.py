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


TASKS_REQUIRED = "required"  # a tool's execution.taskSupport when it runs only as an MCP task


@dataclass(frozen=True)
class McpToolInfo:
    name: str
    description: str = ""
    input_schema: dict = field(default_factory=dict)
    task_support: str = ""  # execution.taskSupport (2025-11-25): "", "forbidden", "optional" or "required"

    @property
    def tasks_only(self) -> bool:
        """It runs only as an MCP task, which NanoHermes does not run (listing.py leaves it out)."""
        return self.task_support == TASKS_REQUIRED

    def to_dict(self) -> dict:
        data = {"name": self.name, "description": self.description, "input_schema": self.input_schema}
        return {**data, "task_support": self.task_support} if self.task_support else data

    @classmethod
    def from_dict(cls, data: dict) -> McpToolInfo:
        schema = data.get("input_schema")
        schema = schema if isinstance(schema, dict) else {}
        return cls(str(data["name"]), str(data.get("description") or ""), schema, str(data.get("task_support") or ""))


@dataclass(frozen=True)
class McpPromptArgument:
    name: str
    required: bool = False
    description: str = ""


@dataclass(frozen=True)
class McpPromptInfo:
    """A server's prompt, as its slash command needs it (kept, so an editor is told of it before
    the server runs)."""

    name: str
    description: str = ""
    arguments: tuple[McpPromptArgument, ...] = ()

    def to_dict(self) -> dict:
        arguments = [{"name": a.name, "required": a.required, "description": a.description} for a in self.arguments]
        return {"name": self.name, "description": self.description, "arguments": arguments}

    @classmethod
    def from_dict(cls, data: dict) -> McpPromptInfo:
        arguments = tuple(
            McpPromptArgument(str(a["name"]), bool(a.get("required")), str(a.get("description") or ""))
            for a in data.get("arguments") or ()
        )
        return cls(str(data["name"]), str(data.get("description") or ""), arguments)

    @classmethod
    def from_sdk(cls, prompt) -> McpPromptInfo:
        arguments = tuple(
            McpPromptArgument(a.name, bool(a.required), a.description or "") for a in prompt.arguments or ()
        )
        return cls(prompt.name, prompt.description or "", arguments)


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

    def prompts(self, server: McpServerSettings) -> list[McpPromptInfo] | None:
        """The server's prompts as last listed; None when they never were."""
        entry = self._read().get(server.name)
        if not isinstance(entry, dict) or entry.get("fingerprint") != server.fingerprint() or "prompts" not in entry:
            return None
        try:
            return [McpPromptInfo.from_dict(p) for p in entry.get("prompts") or []]
        except (KeyError, TypeError, AttributeError):
            return None

    def instructions(self, server: McpServerSettings) -> str:
        """The server's `instructions` as last given ("" when none, or never started)."""
        entry = self._read().get(server.name)
        if not isinstance(entry, dict) or entry.get("fingerprint") != server.fingerprint():
            return ""
        return str(entry.get("instructions") or "")[:MAX_INSTRUCTIONS_CHARS]

    def save(
        self,
        server: McpServerSettings,
        tools: list[McpToolInfo],
        instructions: str = "",
        prompts: list[McpPromptInfo] | None = None,
    ) -> None:
        """Keep this list for the next sessions (`prompts` None: those kept stay). A cache that
        cannot be written is no error: the next session lists the server as not listed yet."""
        servers = self._read()
        kept = servers.get(server.name) if isinstance(servers.get(server.name), dict) else {}
        entry = {
            "fingerprint": server.fingerprint(),
            "tools": [t.to_dict() for t in tools[:MAX_TOOLS_PER_SERVER]],
            "instructions": instructions[:MAX_INSTRUCTIONS_CHARS],
        }
        if prompts is not None:
            entry["prompts"] = [p.to_dict() for p in prompts[:MAX_TOOLS_PER_SERVER]]
        elif "prompts" in kept and kept.get("fingerprint") == entry["fingerprint"]:
            entry["prompts"] = kept["prompts"]
        servers[server.name] = entry
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
