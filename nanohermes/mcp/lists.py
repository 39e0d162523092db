"""A server's lists read page by page with the SDK's Client: its tools (with what a tool's
execution needs), resources, resource templates and prompts."""

from __future__ import annotations

from nanohermes.mcp.toolcache import McpPromptInfo, McpToolInfo

MAX_PAGES = 50  # a list's pages (a cursor that never ends is a bug)


async def list_tools(client, refresh: bool = False) -> list[McpToolInfo]:
    """Every page of the server's tool list (`refresh`: not from the SDK's response cache)."""
    tools, cursor = [], None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="refresh" if refresh else "use")
        tools += [_tool_info(t) for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _tool_info(tool) -> McpToolInfo:
    tasks = getattr(getattr(tool, "execution", None), "task_support", None) or ""
    return McpToolInfo(tool.name, tool.description or "", dict(tool.input_schema or {}), str(tasks))


async def list_prompts(client) -> list[McpPromptInfo]:
    """Every page of the server's prompts ([] when it offers none), up to MAX_LISTED_ITEMS."""
    return [McpPromptInfo.from_sdk(p) for p in await pages(client, "prompts")]


MAX_LISTED_ITEMS = 200  # a server's resources, templates or prompts past this are a catalogue: not listed
LISTS = {  # what a list is called: (the server's capability, the Client's method, the page's field)
    "resources": ("resources", "list_resources", "resources"),
    "templates": ("resources", "list_resource_templates", "resource_templates"),
    "prompts": ("prompts", "list_prompts", "prompts"),
}


async def pages(client, kind: str) -> list:
    """Every page of one of LISTS, up to MAX_LISTED_ITEMS ([] when the server lacks the capability)."""
    capability, method, field = LISTS[kind]
    if not getattr(client.server_capabilities, capability, None):
        return []
    items, cursor = [], None
    for _ in range(MAX_PAGES):
        page = await getattr(client, method)(cursor=cursor)
        items += list(getattr(page, field) or [])
        cursor = page.next_cursor
        if not cursor or len(items) >= MAX_LISTED_ITEMS:
            break
    return items[:MAX_LISTED_ITEMS]
