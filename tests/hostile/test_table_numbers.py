"""Issue 26, item 11: `timeout = nan` or `inf` in an MCP server's table or in [web_search] was
accepted, then failed at the first call in a library's words. Met through the CLI: the
configuration is refused at start, naming the table and the key, before any session exists."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from nanohermes.cli import app
from tests.support.mcp_servers import demo_settings, toml_for
from tests.support.scripted_server import call, text

pytestmark = pytest.mark.subprocess

MCP = toml_for(demo_settings(trusted=True))
SEARCH = '[web_search]\nbackend = "searxng"\nurl = "http://127.0.0.1:9"\n'
CASES = {
    "mcp-nan-timeout": (MCP + "timeout = nan\n", "[mcp.servers.demo]: timeout must be a number of seconds"),
    "mcp-inf-timeout": (MCP + "timeout = inf\n", "[mcp.servers.demo]: timeout must be a number of seconds"),
    "mcp-nan-startup": (MCP + "startup_timeout = nan\n", "startup_timeout must be a number of seconds"),
    "mcp-huge-timeout": (MCP + "timeout = 1e300\n", "timeout must be a number of seconds above 0 and up to 86400"),
    "search-nan-timeout": (SEARCH + "timeout = nan\n", "[web_search]: timeout must be a number of seconds"),
    "search-inf-timeout": (SEARCH + "timeout = -inf\n", "[web_search]: timeout must be a number of seconds"),
    "search-nan-results": (SEARCH + "max_results = nan\n", "max_results must be a whole number from 1 to 10"),
    "search-inf-results": (SEARCH + "max_results = inf\n", "max_results must be a whole number from 1 to 10"),
}


@pytest.mark.parametrize("table, says", CASES.values(), ids=CASES.keys())
def test_a_timeout_of_nan_or_inf_in_an_mcp_or_web_search_table_is_refused_at_start(
    server, workspace, isolated_home, table, says
):
    (isolated_home / "config.toml").write_text(table)
    server.add(call("mcp", {"name": "demo.echo", "arguments": {"text": "x"}}), call("web_search", {"query": "q"}))
    server.add(text("done"))
    r = CliRunner().invoke(app, ["-p", "go", "--yes", "--base-url", server.url, "-C", str(workspace)])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 1 and says in r.stderr, r.stderr
    assert "bug in NanoHermes" not in r.stderr and server.chat_requests() == []
