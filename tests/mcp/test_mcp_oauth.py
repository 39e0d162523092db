"""OAuth 2.1 against a real SDK server that demands it (tests/support/mcp_oauth_server.py, over
streamable HTTP): a session without a login is told the command; `mcp login` runs the flow (a
"browser" that follows the redirects to the loopback callback), keeps the tokens 0600 and never
prints them (and redacts them from what servers return); a later session uses them and refreshes them once they expired."""

import json
import os
import stat
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from nanohermes.configure import load_config
from nanohermes.mcp.hub import McpHub, McpUnavailable
from nanohermes.mcp.report import login
from nanohermes.mcp.settings import token_path
from nanohermes.redact import Redactor
from tests.support.mcp_oauth_server import ACCESS_TOKEN_S
from tests.support.mcp_servers import free_port, wait_for_port

pytestmark = pytest.mark.subprocess

OAUTH_SERVER = str(Path(__file__).parents[1] / "support" / "mcp_oauth_server.py")


@pytest.fixture
def guarded(isolated_home, workspace):
    port = free_port()
    proc = subprocess.Popen([sys.executable, OAUTH_SERVER, str(port)], stderr=subprocess.DEVNULL)
    try:
        wait_for_port(proc, port)
        (isolated_home / "config.toml").write_text(
            f'[mcp.servers.guarded]\nurl = "http://127.0.0.1:{port}/mcp"\noauth = true\n'
        )
        yield load_config(workspace=workspace)
    finally:
        proc.kill()
        proc.wait()


def browser(url: str) -> None:
    """What a user's browser does here: the server approves at once and redirects to the callback."""
    threading.Thread(target=lambda: urllib.request.urlopen(url, timeout=10).read(), daemon=True).start()


def test_an_oauth_server_needs_a_login_which_keeps_tokens_0600_and_a_later_session_refreshes_them(guarded):
    config = guarded
    hub = McpHub(config.mcp, config.home, config.workspace)
    try:
        with pytest.raises(McpUnavailable, match=r"it needs an OAuth login: run `nanohermes mcp login guarded`"):
            hub.tools("guarded")
    finally:
        hub.close()
    said = []
    assert login(config, "guarded", said.append, browser) == 0
    stored = token_path(config.home, "guarded")
    assert said == [f"✓ guarded: logged in · 1 tool(s) · tokens kept in {stored} (0600)"]
    assert stat.S_IMODE(os.stat(stored).st_mode) == 0o600 and stat.S_IMODE(os.stat(stored.parent).st_mode) == 0o700
    first = stored.read_text()
    assert '"access_token": "at-' in first and "at-" not in "".join(said)
    access = json.loads(first)["tokens"]["access_token"]  # a server that echoes it: redacted, as keys are
    redact = Redactor.for_config(load_config(workspace=config.workspace)).text
    assert redact(f"token {access}") == "token [redacted: mcp.servers.guarded.oauth]"
    time.sleep(ACCESS_TOKEN_S + 1.2)  # the access token has expired: the session must refresh it
    hub = McpHub(config.mcp, config.home, config.workspace)
    try:
        tools = [t.name for t in hub.tools("guarded")]
        outcome = hub.call("guarded", "secret_plan", {})
    finally:
        hub.close()
    assert tools == ["secret_plan"] and outcome.blocks[0].text == "the plan: ship on Friday"
    assert stored.read_text() != first  # refreshed tokens, written back
    assert login(config, "nope", said.append, browser) == 1 and "with oauth = true" in said[-1]
