"""Issue 26, item 7: MCP `arguments` given as a JSON string of a non-object (`"[1]"`, `"42"`) or
a string that is not JSON gave the crash paragraph ("a bug in NanoHermes") once the server ran,
from the CLI and over ACP. Driven through the CLI and a real `nanohermes acp` against the SDK's
demo server: the model is told what to send, and nothing is asked for a call that is never sent."""

from __future__ import annotations

import sys

import pytest
from acp import text_block
from acp.schema import McpServerStdio
from typer.testing import CliRunner

from nanohermes.cli import app
from tests.support.acp_client import AcpHarness
from tests.support.mcp_servers import DEMO_SERVER, demo_settings, toml_for
from tests.support.scripted_server import call, text

pytestmark = pytest.mark.subprocess

ARGUMENTS = ["[1]", "42", '"text"', "null", "not json {", "true"]
TOLD = "error: arguments must be a JSON object"


def listing_then(arguments: str):
    """A listing (it starts the server: its own tool list then judges the call), then the call."""
    return call("mcp", {"name": "demo"}), call("mcp", {"name": "demo.echo", "arguments": arguments})


@pytest.mark.parametrize("arguments", ARGUMENTS)
def test_mcp_arguments_that_are_no_json_object_are_an_error_for_the_model_not_a_crash(
    server, workspace, isolated_home, arguments
):
    (isolated_home / "config.toml").write_text(toml_for(demo_settings()))
    server.add(*listing_then(arguments), text("told"))
    r = CliRunner().invoke(app, ["-p", "echo", "--base-url", server.url, "-C", str(workspace)])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 0 and r.stdout == "told\n", r.stderr
    assert server.chat_requests()[-1]["messages"][-1]["content"].startswith(TOLD)


def test_mcp_arguments_that_are_no_json_object_are_an_error_over_acp(server, workspace, tmp_path):
    env = {"NANOHERMES_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": server.url}
    editor = AcpHarness({**env, "NANOHERMES_MODEL": "m"}, workspace, tmp_path / "stderr.log")
    try:
        demo = McpServerStdio(name="demo", command=sys.executable, args=[DEMO_SERVER], env=[])
        session_id = editor.run(editor.conn.new_session(cwd=str(workspace), mcp_servers=[demo])).session_id
        server.add(*listing_then("[1]"), text("told"))
        editor.run(editor.conn.prompt(session_id=session_id, prompt=[text_block("echo")]))
        assert editor.client.text(session_id) == "told" and editor.client.questions == []
    finally:
        assert editor.close() == 0
    assert server.chat_requests()[-1]["messages"][-1]["content"].startswith(TOLD)
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()
