"""The fixed cost of MCP: three servers of ten tools each, with their full schemas in the tool
list (what peers send) and with progressive disclosure (what NanoHermes sends), against none.

    .venv/bin/python scripts/bench_mcp_cost.py

The tools are those of tests/support/mcp_demo_server.py --tools 10 (a tracker-like server
written with the SDK: a description and three described parameters each), listed by a real
stdio server. Prints o200k tokens of the system prompt plus the tool schemas (the fixed cost
of a request, before any conversation). The issue's bound: disclosure within 300 of none.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nanohermes.config import Config
from nanohermes.context.tokens import count_tokens
from nanohermes.mcp.hub import McpHub
from nanohermes.mcp.toolcache import ToolCache
from nanohermes.runtime import build_runtime
from tests.support.mcp_servers import demo_settings

SERVERS = ("github", "linear", "jira")
BOUND = 300  # tokens over the cost without MCP (issue 16)


def fixed_cost(config: Config) -> int:
    runtime = build_runtime(config, None, lambda event: None, approve=None)
    agent = runtime.agent
    runtime.close()
    return count_tokens(agent.messages[0]["content"]) + count_tokens(json.dumps(agent.tool_schemas()))


def main() -> None:
    home, workspace = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    hub = McpHub((demo_settings("tracker", "--tools", "10"),), home, workspace)
    try:
        tools = hub.tools("tracker")  # a real server's list, over stdio
    finally:
        hub.close()
    servers = tuple(demo_settings(name, "--tools", "10") for name in SERVERS)
    for settings in servers:
        ToolCache(home).save(settings, tools)
    base = dict(model="m", base_url="http://127.0.0.1:9/v1", api_key="k", workspace=workspace, home=home)
    none = fixed_cost(Config(**base))
    disclosure = fixed_cost(Config(**base, mcp=servers))
    schemas = [
        {
            "type": "function",
            "function": {"name": f"{s.name}__{t.name}", "description": t.description, "parameters": t.input_schema},
        }
        for s in servers
        for t in tools
    ]
    full = none + count_tokens(json.dumps(schemas))
    print(f"{len(SERVERS)} servers x {len(tools)} tools, o200k tokens of system prompt + tool schemas")
    print(f"| {'configuration':<40} | {'fixed cost':>10} | {'over none':>9} |")
    print(f"| {'-' * 40} | {'-' * 10}:| {'-' * 9}:|")
    for label, cost in (
        ("no MCP", none),
        ("full schemas (one tool per MCP tool)", full),
        ("progressive disclosure (NanoHermes)", disclosure),
    ):
        print(f"| {label:<40} | {cost:>10,} | {cost - none:>+9,} |")
    print(f"bound: +{BOUND}: {'met' if disclosure - none <= BOUND else 'NOT met'}")


if __name__ == "__main__":
    main()
