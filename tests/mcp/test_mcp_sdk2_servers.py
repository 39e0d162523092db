"""Servers written with today's SDK (mcp 2.x) the way its own examples write them — ctx.session.list_roots(),
ctx.elicit() with a form of several fields, ctx.session.create_message() — over real stdio and
streamable HTTP, through the real runtime and the scripted model server.

What the SDK does, measured here: its Client's default mode ("auto") settles on 2026-07-28 with any
2.x server, where the server cannot send requests of its own ("no back-channel"); its "legacy"
mode, the initialize handshake, settles on 2025-11-25 where all three work. NanoHermes speaks the
handshake unless a server's table pins protocol_version."""

from __future__ import annotations

import json

import pytest

from nanohermes.configured_tools import ConfiguredTools
from nanohermes.errors import ConfigError
from nanohermes.mcp.asking import ACCEPT, Reply, roots_for
from nanohermes.mcp.hub import McpHub, McpUnavailable
from nanohermes.mcp.sampling import APPROVE
from nanohermes.mcp.settings import AUTO, HANDSHAKE_VERSION, MODERN_VERSION, McpServerSettings, parse_mcp_table
from nanohermes.mcp.tool import make_mcp_tool
from nanohermes.mcp.toolcache import McpToolInfo
from nanohermes.runtime import build_runtime
from nanohermes.tools import ToolContext, dispatch
from tests.support.mcp_servers import demo_settings, start_http_demo, tool_results
from tests.support.scripted_server import call, text

BOOKING = {"check_alternative": True, "alternative_date": "2024-12-27", "party_size": 4}
CALLS = (
    call("mcp", {"name": "classic.show_roots"}),
    call("mcp", {"name": "classic.book_table", "arguments": {"date": "2024-12-25"}}),
    call("mcp", {"name": "classic.generate_poem", "arguments": {"topic": "tea"}}),
)

pytestmark = pytest.mark.subprocess
NO_BACK_CHANNEL = "this transport context has no back-channel for server-initiated requests"


def classic(transport: str, version: str | None):
    """(settings, the HTTP server's process or None) for the classic server over `transport`."""
    if transport == "stdio":
        return demo_settings("classic", "--classic", trusted=True, protocol_version=version), None
    process, url = start_http_demo("--classic")
    return McpServerSettings("classic", url=url, trusted=True, protocol_version=version), process


def run_three_calls(configure, server, settings) -> tuple[list[str], list, str]:
    """One session calling the three tools (the user says yes to everything): their results and the questions."""
    asked = []

    def ask_user(question):
        asked.append(question)
        return Reply(ACCEPT, {APPROVE: True} if question.fields[0].name == APPROVE else BOOKING)

    server.add(*CALLS)
    server.handler = lambda body: text("Leaves unfurl in steam") if "tools" not in body else text("done")
    runtime = build_runtime(configure(settings), None, lambda e: None, None, ask_user=ask_user)
    try:
        runtime.agent.run_turn("roots, a table, a poem")
        version = runtime.configured.mcp.protocol_version("classic")
    finally:
        runtime.close()
    return tool_results(server), asked, version


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_sdk2_server_asks_for_roots_a_form_and_sampling_and_gets_all_three(transport, configure, server, workspace):
    settings, process = classic(transport, None)
    try:
        (roots, booked, poem), asked, version = run_three_calls(configure, server, settings)
    finally:
        if process is not None:
            process.kill()
            process.wait()
    assert version == HANDSHAKE_VERSION
    uri, name = roots_for(workspace)[0]
    assert roots == f"mcp classic.show_roots:\n{uri} ({name})"
    assert booked == f"mcp classic.book_table:\n[SUCCESS] {BOOKING}"
    assert poem.startswith("mcp classic.generate_poem:\n") and poem.endswith(": Leaves unfurl in steam")
    form, sampling = asked
    assert form.message == "No tables available on 2024-12-25. Try another date?"
    assert [(f.name, f.kind, f.required) for f in form.fields] == [
        ("check_alternative", "boolean", True),
        ("alternative_date", "string", False),
        ("party_size", "integer", False),
    ]
    assert "Write a short poem about tea" in sampling.message


@pytest.mark.parametrize(("transport", "version"), [("stdio", MODERN_VERSION), ("http", AUTO)])
def test_pinned_to_2026_07_28_the_same_server_cannot_ask_as_the_sdk_says(transport, version, configure, server):
    settings, process = classic(transport, version)
    try:
        results, asked, negotiated = run_three_calls(configure, server, settings)
    finally:
        if process is not None:
            process.kill()
            process.wait()
    assert negotiated == MODERN_VERSION and asked == []
    methods = ("roots/list", "elicitation/create", "sampling/createMessage")
    for result, method in zip(results, methods, strict=True):
        assert f"Cannot send '{method}': {NO_BACK_CHANNEL}" in result


def test_a_resolve_marker_server_asks_on_2026_07_28_too(tmp_path, workspace):
    """MCPServer's Resolve markers ride input-required results: they need no back-channel."""
    hub = McpHub((demo_settings("rich", "--rich", protocol_version=MODERN_VERSION),), tmp_path, workspace)
    hub.ask_user = lambda question: Reply(ACCEPT, {"title": "standup", "minutes": 15})
    try:
        hub.tools("rich")
        assert hub.protocol_version("rich") == MODERN_VERSION
        where = hub.call("rich", "where", {})
        booked = hub.call("rich", "book", {})
    finally:
        hub.close()
    assert where.blocks[0].text == roots_for(workspace)[0][0]
    assert booked.blocks[0].text == "accept: {'title': 'standup', 'minutes': 15, 'remote': False}"


def test_a_server_that_refuses_the_handshake_is_spoken_to_in_2026_07_28_unless_pinned(tmp_path, workspace):
    servers = (
        demo_settings("modern", "--modern-only"),
        demo_settings("pinned", "--modern-only", protocol_version=HANDSHAKE_VERSION),
    )
    hub = McpHub(servers, tmp_path, workspace)
    try:
        assert "add" in [t.name for t in hub.tools("modern")]
        assert hub.protocol_version("modern") == MODERN_VERSION
        assert hub.call("modern", "add", {"a": 2, "b": 3}).blocks[0].text == "5"
        with pytest.raises(McpUnavailable, match="it answered with an error: Unsupported protocol version"):
            hub.tools("pinned")
    finally:
        hub.close()


def test_the_protocol_names_are_the_sdks_own():
    from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

    assert (HANDSHAKE_VERSION, MODERN_VERSION) == (LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION)


def test_protocol_version_is_checked_when_the_configuration_is_read(tmp_path):
    table = {"servers": {"s": {"command": "x", "protocol_version": "2026-07-28"}}}
    assert parse_mcp_table(table, tmp_path / "config.toml")[0].protocol_version == MODERN_VERSION
    with pytest.raises(ConfigError, match='protocol_version must be one of "2025-11-25", "2026-07-28", "auto"'):
        parse_mcp_table({"servers": {"s": {"command": "x", "protocol_version": "2025-06-18"}}}, tmp_path / "c.toml")


def test_a_tool_that_runs_only_as_a_task_is_left_out_with_a_notice_and_never_sent(tmp_path, workspace):
    from mcp import MCPError

    hub = McpHub((demo_settings("classic", "--classic"),), tmp_path, workspace)
    try:
        render = next(t for t in hub.tools("classic") if t.name == "render")
        assert render.task_support == "required" and render.tasks_only
        with pytest.raises(MCPError) as plain:  # what a plain call gets, every time
            hub.call("classic", "render", {"scene": "a"})
        assert plain.value.code == -32601
        prompt = ConfiguredTools(mcp=hub).listing("ask")
        listing = dispatch_mcp(hub, name="classic").content
        refused = dispatch_mcp(hub, name="classic.render", arguments={"scene": "a"})
    finally:
        hub.close()
    left_out = "- classic: render left out (it runs only as an MCP task, which NanoHermes does not run)"
    assert left_out in prompt and "render," not in prompt and "show_roots" in prompt
    assert left_out in listing and "render(" not in listing and "4 tool(s)" not in listing
    assert not refused.ok and refused.content.endswith(
        "classic.render was not called: it runs only as an MCP task, which NanoHermes does not run."
    )
    assert McpToolInfo.from_dict(render.to_dict()) == render  # kept for the next sessions' prompt


def dispatch_mcp(hub, **args):
    ctx = ToolContext(workspace=hub.workspace, home=hub.workspace, max_output=20_000)
    return dispatch(ctx, {"mcp": make_mcp_tool(hub)}, "mcp", json.dumps(args))
