"""The one model-facing MCP tool: `mcp(name, arguments)`.

`name` is `server.tool` (a call) or `server` (its tool list, with each tool's parameters, and
its resources); `uri` with `server` reads one of its resources (a resource link a tool returned).
A call whose arguments do not fit the tool's schema is not sent: the result is what did not
fit and the tool's parameters, so the model learns the schema only for the tools it uses.
Results go through the same dispatch as every tool (clamp, notes, placeholders, recall).

Approval: a call needs a yes like run_command unless its server is `trusted` in config.toml.
Nothing a server says (descriptions, annotations such as readOnlyHint) can change that. A
listing, or a call the running server's own list says cannot run (unknown tool, wrong
arguments), asks nothing.
"""

from __future__ import annotations

import json
import math

from nanohermes.calls import ResultFacts
from nanohermes.errors import ToolError
from nanohermes.mcp.hub import McpCallTimeout, McpHub, McpUnavailable
from nanohermes.mcp.listing import (
    TASKS_ONLY_NOTE,
    URI_CHARS,
    one_line,
    render_outcome,
    resource_text,
    resources_lines,
    server_tools,
    templates_lines,
    usage,
)
from nanohermes.mcp.toolcache import McpToolInfo
from nanohermes.text import neutralize
from nanohermes.tools import Tool, ToolContext, ToolOutput

DESCRIPTION = "Call an MCP tool from the MCP tools list, or list a server's tools."
PARAMETERS = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "server.tool to call, or server to list"},
        "arguments": {"type": "object", "description": "the tool's arguments"},
        "uri": {"type": "string", "description": "with name=server: a resource of it to read"},
    },
    "required": ["name"],
}
PREVIEW_CHARS = 2_000  # the arguments as the approval question shows them
MAX_PROBLEMS = 5  # schema mismatches named in one result; the rest would repeat the lesson


def make_mcp_tool(hub: McpHub) -> Tool:
    def mcp(ctx: ToolContext, name: str, arguments: str | None = None, uri: str | None = None) -> str:
        server, tool_name = resolve(hub, name)
        if uri and tool_name is not None:
            raise ToolError(f'uri reads a resource of a server: name="{server}", uri="{uri}" (no tool name)')
        if uri:
            return read_resource(hub, server, uri)
        if tool_name is None:
            return _listing(hub, server)
        tool = _find(hub, server, tool_name, _tools(hub, server))
        if tool.tasks_only:  # listed as left out; a plain call would only ever get -32601
            raise ToolError(neutralize(f"{server}.{tool.name} was not called: it runs {TASKS_ONLY_NOTE}."))
        args = _arguments(arguments)
        problems = check_arguments(tool, args)
        if problems:
            problems_text = f"{server}.{tool.name} was not called: {'; '.join(problems)}\n{usage(server, tool)}"
            raise ToolError(neutralize(problems_text))  # the server's schema is its text: no raw controls
        return _call(hub, server, tool, args, ctx.report)

    def asks(args: dict) -> bool:
        """Whether this call needs the user's yes (before anything starts: no I/O here). Only
        the running server's own list can say a call will not be sent: a list cached from an
        earlier start may lack a tool added since, or hold an old schema."""
        try:
            server, tool_name = resolve(hub, str(args.get("name", "")))
        except ToolError:
            return False  # dispatch answers with the error; nothing runs
        if tool_name is None or args.get("uri") or hub.servers[server].trusted:
            return False  # a listing or a read asks nothing; a trusted server's call neither
        live = hub.live_tools(server)
        if live is None:
            return True
        tool = next((t for t in live if t.name == tool_name), None)
        if tool is None:  # perhaps added since: the running server's list, fetched again, decides
            tool = next((t for t in _refreshed(hub, server, live) if t.name == tool_name), None)
        try:
            given = _arguments(args.get("arguments"))
        except ToolError:
            return False  # not an object: never sent (the result says why)
        # False when it will not be sent (the result says why)
        return tool is not None and not check_arguments(tool, given)

    def preview(ctx: ToolContext, name: str, arguments: str | None = None, uri: str | None = None) -> str:
        shown = json.dumps(_arguments(arguments), ensure_ascii=False, indent=1)
        return f"{name}\n{shown[:PREVIEW_CHARS]}{'…' if len(shown) > PREVIEW_CHARS else ''}"

    def in_plan_mode(args: dict) -> bool:
        """Plan mode runs a trusted server's calls (docs/mcp-and-acp.md: trusted is the user's word) and
        nothing of another server's, not even its start."""
        try:
            server, _ = resolve(hub, str(args.get("name", "")))
        except ToolError:
            return True  # dispatch answers with the error; nothing runs
        return hub.servers[server].trusted

    trusted = any(s.trusted for s in hub.servers.values())
    return Tool(
        "mcp",
        DESCRIPTION,
        PARAMETERS,
        mcp,
        needs_approval=True,
        preview=preview,
        asks=asks,
        plan_allowed=in_plan_mode if trusted else None,
    )


def resolve(hub: McpHub, name: str) -> tuple[str, str | None]:
    """(server, tool or None) for `server.tool`, `server`, or a tool name only one server has."""
    server, dot, tool = name.strip().partition(".")
    if server in hub.servers:
        return server, (tool or None) if dot else None
    owners = [s for s in hub.servers if any(t.name == name.strip() for t in hub.known_tools(s) or ())]
    if len(owners) == 1:
        return owners[0], name.strip()
    raise ToolError(
        f"no MCP server {server!r}; the servers are {', '.join(hub.servers)}. "
        'Use name="server.tool" as listed, or name="server" for its tools.'
    )


def _listing(hub: McpHub, server: str) -> str:
    """A server's tools with their parameters, its resources and its resource templates."""
    text = server_tools(hub.servers[server], _tools(hub, server))
    try:
        resources = resources_lines(server, hub.resources(server))
        resources += templates_lines(server, hub.resource_templates(server))
    except Exception as exc:  # its tools are the answer; what is missing is said
        resources = [f"(its resources could not be listed: {neutralize(str(exc))[:200]})"]
    return "\n".join([text, *resources])


def read_resource(hub: McpHub, server: str, uri: str) -> str:
    from mcp import MCPError

    label = f"mcp {server} resource {one_line(uri, URI_CHARS)}"
    if "{" in uri and "}" in uri:  # a template as listed: the server has no resource by that name
        raise ToolError(f"{label}: a template: put a value in place of each {{…}} first, then read that URI")
    try:
        contents = hub.read_resource(server, uri)
    except McpUnavailable as exc:
        raise ToolError(f"MCP server {server} is not available: {exc}") from None
    except McpCallTimeout as exc:
        raise ToolError(f"{label}: {exc}") from None
    except MCPError as exc:
        raise ToolError(
            f'{label}: the server answered with an error: {exc}. mcp(name="{server}") lists its resources'
        ) from None
    body = "\n".join(resource_text(c) for c in contents) or "(no content)"
    return ToolOutput(f"{label}:\n{body}", ResultFacts(found=f"{server} {one_line(uri, 80)}"))


def _tools(hub: McpHub, server: str) -> list[McpToolInfo]:
    try:
        return hub.tools(server)
    except McpUnavailable as exc:
        raise ToolError(f"MCP server {server} is not available: {exc}") from None
    except McpCallTimeout as exc:
        raise ToolError(f"MCP server {server} did not start: {exc}") from None


def _find(hub: McpHub, server: str, name: str, tools: list[McpToolInfo]) -> McpToolInfo:
    tool = next((t for t in tools if t.name == name), None)
    if tool is None:  # added since the list was fetched (its change notice may still be on its way)?
        tools = _refreshed(hub, server, tools)
        tool = next((t for t in tools if t.name == name), None)
    if tool is None:
        names = ", ".join(t.name for t in tools) or "none"
        raise ToolError(neutralize(f"MCP server {server} has no tool {name!r}; its tools: {names}"))
    return tool


def _refreshed(hub: McpHub, server: str, tools: list[McpToolInfo]) -> list[McpToolInfo]:
    try:
        return hub.refresh_tools(server)
    except (McpUnavailable, McpCallTimeout):
        return tools  # the answer is "no such tool" from the list there is


def _arguments(raw) -> dict:
    """The model's `arguments`: an object (dispatch sends it as JSON text) or nothing."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        raise ToolError('arguments must be a JSON object, e.g. {"path": "README.md"}') from None
    if not isinstance(value, dict):
        raise ToolError(f"arguments must be a JSON object, got {type(value).__name__}")
    return value


def check_arguments(tool: McpToolInfo, args: dict) -> list[str]:
    """What in `args` does not fit the tool's schema (empty: it fits, or the schema cannot be
    checked). Small models send "5" for 5: top-level scalars given as strings are converted."""
    _coerce_scalars(tool.input_schema, args)
    if not _finite(args):  # json.loads takes NaN and Infinity; no JSON-RPC message can carry them
        return ["numbers must be finite (NaN and Infinity are not JSON)"]
    try:
        import jsonschema  # comes with the mcp SDK

        validator = jsonschema.validators.validator_for(tool.input_schema)(tool.input_schema)
        errors = sorted(validator.iter_errors(args), key=lambda e: list(e.path))
    except Exception:  # a schema jsonschema cannot read: let the server judge the call
        return []
    return [_problem(e) for e in errors[:MAX_PROBLEMS]]


def _finite(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _problem(error) -> str:
    where = ".".join(str(p) for p in error.path)
    return f"{where}: {error.message}" if where else error.message


def _coerce_scalars(schema: dict, args: dict) -> None:
    props = schema.get("properties") or {}
    for key, value in list(args.items()):
        kind = (props.get(key) or {}).get("type") if isinstance(props.get(key), dict) else None
        if not isinstance(value, str):
            continue
        try:
            if kind == "integer":
                args[key] = int(value)
            elif kind == "number":
                args[key] = float(value)
            elif kind == "boolean" and value.lower() in ("true", "false"):
                args[key] = value.lower() == "true"
        except ValueError:
            pass  # the schema check names it


def _call(hub: McpHub, server: str, tool: McpToolInfo, args: dict, report) -> str:
    from mcp import MCPError

    label = f"{server}.{tool.name}"
    try:
        outcome = hub.call(server, tool.name, args, report)
    except McpUnavailable as exc:
        raise ToolError(f"MCP server {server} is not available: {exc}") from None
    except McpCallTimeout as exc:
        raise ToolError(f"{label}: {exc}") from None
    except MCPError as exc:
        raise ToolError(f"{label}: the server answered with an error: {exc}\n{usage(server, tool)}") from None
    text = render_outcome(label, outcome.blocks, outcome.structured, outcome.notes)
    if outcome.is_error:
        raise ToolError(f"{text}\n{usage(server, tool)}")
    return ToolOutput(text, ResultFacts(found=label))
