"""MCP through the real runtime: config.toml, the loop, approvals, the scripted model server
and a real MCP server (stdio). Servers start on first use; the prompt never moves."""

import json

import pytest

from nanohermes.calls import ToolCall, action_title, describe_result
from nanohermes.loop.approvals import Decision
from nanohermes.mcp.hub import NOT_STARTED, RUNNING
from nanohermes.mcp.settings import McpServerSettings
from nanohermes.runtime import build_runtime
from tests.support.mcp_servers import demo_settings, tool_results
from tests.support.scripted_server import call, text

pytestmark = pytest.mark.subprocess


def test_mcp_calls_ask_like_commands_and_always_covers_only_that_tool(configure, server):
    asked = []

    def approve(tool, args, preview):
        asked.append((action_title(tool.name, args), preview.splitlines()[0]))
        return {"demo.echo": "always"}.get(args["name"], Decision("no", "not that one"))

    server.add(
        call("mcp", {"name": "demo"}),
        call("mcp", {"name": "demo.echo", "arguments": {"text": "a"}}),
        call("mcp", {"name": "demo.echo", "arguments": {"text": "b"}}),
        call("mcp", {"name": "demo.add", "arguments": {"a": 1, "b": 2}}),
        call("mcp", {"name": "demo.add", "arguments": {"a": "x"}}),
        text("done"),
    )
    runtime = build_runtime(configure(demo_settings(), mode="ask"), None, lambda e: None, approve=approve)
    try:
        runtime.agent.run_turn("use the demo server")
    finally:
        runtime.close()
    assert asked == [("Call MCP tool demo.echo", "demo.echo"), ("Call MCP tool demo.add", "demo.add")]
    listing, first, second, refused, unfit = tool_results(server)
    assert listing.startswith("mcp server demo") and (first, second) == ("mcp demo.echo:\na", "mcp demo.echo:\nb")
    assert refused == "refused: the user declined this mcp call; it was not run. The user said: not that one"
    assert unfit.startswith("error: demo.add was not called")  # nothing would run: nothing was asked


def test_a_trusted_server_runs_where_nothing_can_ask_and_an_untrusted_one_is_refused(configure, server):
    trusted, untrusted = demo_settings("local", trusted=True), demo_settings("remote")
    server.add(
        call("mcp", {"name": "local.add", "arguments": {"a": 2, "b": 2}}),
        call("mcp", {"name": "remote.add", "arguments": {"a": 2, "b": 2}}),
        text("done"),
    )
    runtime = build_runtime(configure(trusted, untrusted), None, lambda e: None, approve=None)
    try:
        result = runtime.agent.run_turn("add")
        states = runtime.configured.mcp.status("local").state, runtime.configured.mcp.status("remote").state
    finally:
        runtime.close()
    ran, refused = tool_results(server)
    assert ran == "mcp local.add:\n4" and refused.startswith("refused: mcp needs the user's approval")
    assert result.cannot_ask == ["mcp"] and states == (RUNNING, NOT_STARTED)  # the refused call started nothing


def test_servers_start_on_first_use_and_the_prompt_never_moves_while_one_starts_and_one_turns_out_dead(
    configure, server
):
    dead = McpServerSettings("dead", command="no-such-mcp-server-z", trusted=True)
    config = configure(demo_settings(trusted=True), dead)
    server.add(
        text("hello"),
        call("mcp", {"name": "demo.echo", "arguments": {"text": "up"}}),
        call("mcp", {"name": "dead.anything"}),
        call("mcp", {"name": "demo.echo", "arguments": {"text": "again"}}),
        text("done"),
    )
    events = []
    runtime = build_runtime(config, None, events.append, approve=None)
    hub = runtime.configured.mcp
    try:
        runtime.agent.run_turn("hi")
        assert hub.status("demo").state == NOT_STARTED  # a session that never uses a server never starts it
        runtime.agent.run_turn("use it")
        state = hub.status("demo").state
    finally:
        runtime.close()
    requests = server.chat_requests()
    assert (
        len({json.dumps(r["messages"][0]) for r in requests}) == 1
        and len({json.dumps(r["tools"]) for r in requests}) == 1
    )
    assert 'mcp(name="demo") starts it and lists them' in requests[0]["messages"][0]["content"]
    up, died, again = tool_results(server)
    assert (up, again) == ("mcp demo.echo:\nup", "mcp demo.echo:\nagain")
    assert (
        died
        == "error: MCP server dead is not available: its command 'no-such-mcp-server-z' was not found (is it installed and on PATH?)"
    )
    assert state == RUNNING
    finished = [e for e in events if type(e).__name__ == "ToolFinished"]
    assert [e.ok for e in finished] == [True, False, True]
    # the next session's prompt lists the tools this one's server gave
    runtime = build_runtime(config, None, lambda e: None, approve=None)
    try:
        system = runtime.agent.messages[0]["content"]
        assert (
            "- demo: add, echo, fail, picture, slow, die, big, environment, tricky" in system
            and "- dead: tools not listed yet" in system
        )
    finally:
        runtime.close()


def test_plan_mode_does_not_offer_mcp_calls(configure):
    runtime = build_runtime(configure(demo_settings(), mode="plan"), None, lambda e: None, approve=None)
    try:
        offered = [t["function"]["name"] for t in runtime.agent.tool_schemas()]
    finally:
        runtime.close()
    assert "mcp" not in offered and "read_file" in offered


def test_a_placeholder_for_an_old_mcp_result_names_the_tool_it_came_from():
    line = describe_result(
        ToolCall.of("mcp", json.dumps({"name": "demo.big", "arguments": {"size": 9000}})), "y" * 9000
    )
    assert line == "[mcp name=demo.big → 9,000 chars]"


def test_a_secret_in_an_mcp_servers_table_never_reaches_the_model_or_the_session_file(configure, server, isolated_home):
    secret = "dtk-4f9a1c2b7e6d"
    server.add(call("mcp", {"name": "demo.environment", "arguments": {"name": "DEMO_TOKEN"}}), text("done"))
    config = configure(demo_settings(trusted=True, env=(("DEMO_TOKEN", secret),)))
    runtime = build_runtime(config, None, lambda e: None, approve=None)
    try:
        runtime.agent.run_turn("what is the demo token?")
    finally:
        runtime.close()
    assert tool_results(server) == ["mcp demo.environment:\n[redacted: mcp.servers.demo.env.DEMO_TOKEN]"]
    saved = "".join(p.read_text() for p in (isolated_home / "sessions").rglob("*.jsonl"))
    assert "[redacted: mcp.servers.demo.env.DEMO_TOKEN]" in saved and secret not in saved


def test_a_tool_missing_from_the_cached_list_still_asks_before_it_runs(configure, server, isolated_home):
    """The list cached from the server's last start lacked `echo` (added since): a -p run
    without --yes must refuse the call, not send it because the stale list said it could not run."""
    from nanohermes.mcp.toolcache import McpToolInfo, ToolCache

    settings = demo_settings()
    ToolCache(isolated_home).save(settings, [McpToolInfo("add", "Add two numbers.", {"type": "object"})])
    server.add(call("mcp", {"name": "demo.echo", "arguments": {"text": "ran"}}), text("done"))
    runtime = build_runtime(configure(settings, mode="ask"), None, lambda e: None, approve=None)
    try:
        result = runtime.agent.run_turn("echo it")
    finally:
        runtime.close()
    assert result.cannot_ask == ["mcp"]
    assert tool_results(server)[-1].startswith("refused: mcp needs the user's approval")
