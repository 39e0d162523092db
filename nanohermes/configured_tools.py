"""The tools config.toml adds: `web_search` (a [web_search] backend) and `mcp` with the prompt's
MCP section ([mcp.servers.NAME]). With neither configured there is no schema, no prompt line
and nothing imported: an unused tool is paid for on every request."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nanohermes.tools import Tool

if TYPE_CHECKING:
    from nanohermes.config import Config
    from nanohermes.mcp.hub import McpHub
    from nanohermes.sandbox.policy import Policy


@dataclass
class ConfiguredTools:
    tools: list[Tool] = field(default_factory=list)
    prompt_section: str = ""  # the MCP tools listing; fixed for the session (prompt caching)
    mcp: McpHub | None = None  # the servers, started on first use
    warnings: list[str] = field(default_factory=list)  # configured but not offered, and why

    _listed: tuple = (0, "", "")  # (the hub's changes, the mode, the listing) last built

    def listing(self, mode: str) -> str:
        """The prompt's MCP section now: rebuilt only when a server's tool list changed (a prompt
        cache is broken once per change, not per request) or the mode did (plan mode lists only
        the trusted servers, whose tools are the only ones it runs)."""
        if self.mcp is None:
            return ""
        changes, built_for, text = self._listed
        if (changes, built_for) != (self.mcp.changes, mode):
            text = mcp_listing(self.mcp, mode)
            self._listed = (self.mcp.changes, mode, text)
        return text

    def close(self) -> None:
        if self.mcp is not None:
            self.mcp.close()


def configured_tools(config: Config, sandbox: Policy | None = None) -> ConfiguredTools:
    """`sandbox`: what confines the MCP stdio servers that opted in."""
    found = ConfiguredTools()
    if config.web_search is not None and config.web_search.unavailable:
        found.warnings.append(config.web_search.unavailable)
    elif config.web_search is not None:
        from nanohermes.tools.web_search import make_web_search

        found.tools.append(make_web_search(config.web_search))
    if config.mcp:
        from nanohermes.mcp.hub import McpHub
        from nanohermes.mcp.tool import make_mcp_tool

        found.mcp = McpHub(config.mcp, config.home, config.workspace, sandbox)
        # Decided now, from the tool lists of the servers' last start: no server starts here.
        found.prompt_section = found.listing(config.mode)
        found.tools.append(make_mcp_tool(found.mcp))
    return found


def mcp_listing(hub: McpHub, mode: str) -> str:
    """The MCP section from what the hub knows (live lists, else those of the last start)."""
    from nanohermes.mcp.listing import prompt_section

    servers = [s for s in hub.servers.values() if mode != "plan" or s.trusted]
    said = {s.name: hub.instructions(s.name) for s in servers}
    return prompt_section([(s, hub.known_tools(s.name)) for s in servers], said)
