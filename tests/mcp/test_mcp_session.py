"""MCP capabilities through the real runtime (config.toml, the loop, the scripted model server):
a tool a server adds mid-session (the prompt changes once per change: measured on the requests
sent), a form in a run that cannot ask, plan mode with trusted and untrusted servers, and an
HTTP server that answers 401."""

import json

import pytest

from nanohermes.loop.approvals import PLAN_MODE_UNTRUSTED
from nanohermes.mcp.hub import NOT_STARTED, McpHub, McpUnavailable
from nanohermes.mcp.settings import McpServerSettings
from nanohermes.runtime import build_runtime
from tests.support.mcp_servers import demo_settings, tool_results
from tests.support.raw_servers import RawServer, http_response
from tests.support.scripted_server import call, text

pytestmark = pytest.mark.subprocess


def test_a_tool_added_mid_session_is_listed_and_called_and_the_prompt_changes_once(configure, server):
    """And a form asked where nothing can ask (-p): declined, and the model told."""
    rich = demo_settings("rich", "--rich", trusted=True)
    server.add(
        call("mcp", {"name": "rich.book"}),
        call("mcp", {"name": "rich.grow", "arguments": {"name": "sprout"}}),
        call("mcp", {"name": "rich.sprout"}),
        text("grown"),
        text("still here"),
    )
    runtime = build_runtime(configure(rich), None, lambda e: None, approve=None)
    try:
        runtime.agent.run_turn("grow a tool and call it")
        runtime.agent.run_turn("anything else?")
    finally:
        runtime.close()
    requests = server.chat_requests()
    systems = [r["messages"][0]["content"] for r in requests]
    # one prompt before the change, one after: the prefix a cache keeps is broken once, then stable
    assert len(requests) == 5 and len(set(systems)) == 2 and systems[-2] == systems[-1]
    assert "sprout" not in systems[1] and "sprout" in systems[2]  # the request right after the change lists it
    assert tool_results(server)[:3] == [
        "mcp rich.book:\ndecline: None\n[rich asked the user: 'Which meeting should I book?'; this session cannot "
        "ask the user (a -p run), so the question was declined]",
        "mcp rich.grow:\nadded sprout",
        "mcp rich.sprout:\nsprout says hello",
    ]
    assert len({json.dumps(r["tools"]) for r in requests}) == 1  # the tool schemas never moved


def test_plan_mode_runs_and_lists_only_the_trusted_servers(configure, server):
    trusted, untrusted = demo_settings("local", trusted=True), demo_settings("remote")
    server.add(
        call("mcp", {"name": "local.add", "arguments": {"a": 2, "b": 2}}),
        call("mcp", {"name": "remote.add", "arguments": {"a": 2, "b": 2}}),
        call("mcp", {"name": "remote"}),
        text("planned"),
    )
    runtime = build_runtime(configure(trusted, untrusted, mode="plan"), None, lambda e: None, approve=None)
    try:
        runtime.agent.run_turn("plan it")
        remote_state = runtime.configured.mcp.status("remote").state
        offered = [t["function"]["name"] for t in runtime.agent.tool_schemas()]
        runtime.switch(mode="ask")
        system_in_ask = runtime.agent.messages[0]["content"]
    finally:
        runtime.close()
    system_in_plan = server.chat_requests()[0]["messages"][0]["content"]
    assert tool_results(server) == ["mcp local.add:\n4", PLAN_MODE_UNTRUSTED, PLAN_MODE_UNTRUSTED]
    assert remote_state == NOT_STARTED and "mcp" in offered and "write_file" not in offered
    assert "- local:" in system_in_plan and "remote" not in system_in_plan
    assert "- local:" in system_in_ask and "- remote:" in system_in_ask


def test_a_wrong_token_on_an_http_server_reads_as_http_401(tmp_path):
    refusing = RawServer(http_response("401 Unauthorized", "application/json", '{"error": "invalid_token"}'))
    url = refusing.url.replace("/v1", "/mcp")
    hub = McpHub(
        (McpServerSettings("tracker", url=url, headers=(("Authorization", "Bearer wrong"),)),), tmp_path, tmp_path
    )
    try:
        with pytest.raises(McpUnavailable) as failed:
            hub.tools("tracker")
    finally:
        hub.close()
        refusing.close()
    assert str(failed.value) == f"{url} answered HTTP 401 (check its headers: a token?)"
