"""Drive the reference `@modelcontextprotocol/server-everything` (npm, over stdio) through every
MCP capability NanoHermes's client has. Not in the default suite: it needs npx and the registry.

    .venv/bin/python scripts/try_server_everything.py

Prints the tools a client that declares nothing sees against those NanoHermes's hub sees
(roots and elicitation declared), then what each capability gave: roots, a form (answered by a
scripted user), progress, resources (listed, read, a link followed), prompts, instructions.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nanohermes.configured_tools import mcp_listing
from nanohermes.mcp.asking import ACCEPT, Reply
from nanohermes.mcp.hub import McpHub
from nanohermes.mcp.settings import McpServerSettings
from nanohermes.mcp.tool import make_mcp_tool
from nanohermes.tools import ToolContext, dispatch

COMMAND = ("npx", "-y", "@modelcontextprotocol/server-everything")
SHOWN_CHARS = 300  # each result's start, as printed here


async def bare_tools() -> list[str]:
    """What a client declaring no capabilities is shown (the SDK's Client, no callbacks)."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=COMMAND[0], args=list(COMMAND[1:]))
    async with Client(params) as client:
        return [t.name for t in (await client.list_tools()).tools]


def scripted_user(question) -> Reply:
    """Answers every field with a value of its kind (the first choice of an enum)."""
    print(f"  [asked] {question.message[:80]} · fields: {[f.name for f in question.fields]} · url: {question.url!r}")
    values = {"string": "Ada", "integer": 3, "number": 2.5, "boolean": True}
    picked = {f.name: [f.choices[0]] if f.kind == "array" else f.choices[0] for f in question.fields if f.choices}
    return Reply(ACCEPT, {f.name: picked.get(f.name, values.get(f.kind)) for f in question.fields})


def show(title: str, result) -> None:
    text = result.content if hasattr(result, "content") else str(result)
    flag = "ok" if getattr(result, "ok", True) else "FAILED"
    print(f"\n## {title} ({flag})\n{text[:SHOWN_CHARS]}{'…' if len(text) > SHOWN_CHARS else ''}")


def main() -> int:
    before = asyncio.run(bare_tools())
    home = Path(tempfile.mkdtemp(prefix="nh-everything-"))
    settings = McpServerSettings("everything", command=COMMAND[0], args=COMMAND[1:], trusted=True, timeout=30)
    hub = McpHub((settings,), home, home)
    hub.ask_user = scripted_user
    tool = make_mcp_tool(hub)
    progress: list[str] = []

    def call(**args):
        ctx = ToolContext(workspace=home, home=home, max_output=4_000, progress=progress.append)
        return dispatch(ctx, {"mcp": tool}, "mcp", json.dumps(args))

    try:
        after = [t.name for t in hub.tools("everything")]
        print(f"tools seen: {len(before)} declaring nothing, {len(after)} with roots and elicitation")
        print(f"  shown now: {sorted(set(after) - set(before))}")
        show("roots", call(name="everything.get-roots-list"))
        show("elicitation (form)", call(name="everything.trigger-elicitation-request"))
        url_args = {"url": "https://example.com/consent", "message": "Open this page"}
        show("elicitation (a URL to open)", call(name="everything.trigger-url-elicitation", arguments=url_args))
        started = time.monotonic()
        long_run = call(name="everything.trigger-long-running-operation", arguments={"duration": 3, "steps": 5})
        show(f"progress: {len(progress)} shown in {time.monotonic() - started:.1f} s: {progress[:3]}", long_run)
        show("resources (listed with the tools)", call(name="everything"))
        resources = hub.resources("everything")
        if resources:
            show(f"read {resources[0].uri}", call(name="everything", uri=str(resources[0].uri)))
        links = call(name="everything.get-resource-links", arguments={"count": 2})
        show("resource links", links)
        uri = links.content.split('uri="', 1)[-1].split('"', 1)[0] if 'uri="' in links.content else ""
        if uri:
            show(f"a link followed: {uri}", call(name="everything", uri=uri))
        prompts = hub.prompts("everything")
        print(f"\n## prompts: {[p.name for p in prompts]} (REPL: /mcp:everything:NAME)")
        if prompts:
            got = hub.get_prompt("everything", prompts[0].name, {})
            print(f"  {prompts[0].name}: {[getattr(m.content, 'text', m.content.type)[:80] for m in got.messages]}")
        print(f"\n## the prompt's MCP section\n{mcp_listing(hub, 'ask')}")
    finally:
        hub.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
