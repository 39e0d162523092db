"""`nanohermes mcp list`: each configured server started, its state and tools shown, and
stopped again. Listing also refreshes the tool lists the next sessions' prompts show."""

from __future__ import annotations

from collections.abc import Callable

from nanohermes.mcp.hub import McpCallTimeout, McpHub, McpUnavailable
from nanohermes.mcp.listing import TASKS_ONLY_NOTE, one_line, signature

NAME_CHARS = 64
DESCRIPTION_CHARS = 100  # one terminal line per tool


def list_servers(config, say: Callable[[str], None]) -> int:
    """Print each server and its tools; the exit code is 1 when one could not be started."""
    if not config.mcp:
        say(f"no MCP servers configured (add [mcp.servers.NAME] tables to {config.home / 'config.toml'})")
        return 0
    from nanohermes.redact import Redactor

    redact = Redactor.for_config(config).text  # a failing server's stderr may quote its token
    say = lambda line, say=say: say(redact(line))  # noqa: E731
    hub = McpHub(config.mcp, config.home, config.workspace)
    code = 0
    try:
        for settings in config.mcp:
            where = one_line(settings.describe(), 120)
            trust = "trusted: calls run without asking" if settings.trusted else "calls ask for approval"
            try:
                tools = hub.tools(settings.name)
            except (McpUnavailable, McpCallTimeout) as exc:
                say(f"✗ {settings.name} ({where}) · failed: {one_line(str(exc), 400)}")
                code = 1
                continue
            protocol = hub.protocol_version(settings.name)
            say(f"✓ {settings.name} ({where}) · running · {len(tools)} tool(s) · protocol {protocol} · {trust}")
            for tool in tools:
                line = f"    {one_line(signature(tool), NAME_CHARS)}: {one_line(tool.description, DESCRIPTION_CHARS)}"
                say(f"{line.rstrip(': ')}{f'  [left out: it runs {TASKS_ONLY_NOTE}]' if tool.tasks_only else ''}")
    finally:
        hub.close()
    return code


def login(config, name: str, say: Callable[[str], None], browser: Callable[[str], None]) -> int:
    """`nanohermes mcp login NAME`: the OAuth browser flow for an HTTP server with `oauth = true`;
    the tokens are kept (mcp/oauth.py) and never shown. The exit code is 1 when it failed."""
    from nanohermes.mcp.settings import token_path

    settings = next((s for s in config.mcp if s.name == name), None)
    if settings is None or not settings.oauth:
        known = ", ".join(s.name for s in config.mcp if s.oauth) or "none"
        say(f"no MCP server {name!r} with oauth = true in config.toml (those with it: {known})")
        return 1
    hub = McpHub((settings,), config.home, config.workspace)
    hub.browser = browser
    try:
        tools = hub.tools(name)
    except (McpUnavailable, McpCallTimeout) as exc:
        say(f"✗ {name}: login failed: {one_line(str(exc), 400)}")
        return 1
    finally:
        hub.close()
    say(f"✓ {name}: logged in · {len(tools)} tool(s) · tokens kept in {token_path(config.home, name)} (0600)")
    return 0
