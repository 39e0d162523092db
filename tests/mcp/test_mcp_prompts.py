"""An MCP server's prompt as `/server:prompt` in a `-p` task (the real CLI against a real SDK
server over stdio), and how a typed command is read (pure)."""

from __future__ import annotations

import pytest

from nanohermes.mcp.prompts import arguments_for, find_prompt_command, usage_hint
from nanohermes.mcp.toolcache import McpPromptArgument, McpPromptInfo
from tests.support.mcp_servers import demo_settings, toml_for
from tests.support.scripted_server import text
from tests.test_cli_sessions import ask

pytestmark = pytest.mark.subprocess

REVIEW = McpPromptInfo("review", "Review a file.", (McpPromptArgument("path", True), McpPromptArgument("focus")))


@pytest.mark.parametrize(
    ("typed", "found"),
    [
        ("/rich:review path=a.py", ("rich", "review", "path=a.py")),
        ("/mcp:rich:review path=a.py", ("rich", "review", "path=a.py")),  # the REPL's spelling
        ("/rich:review\nmore lines", ("rich", "review", "more lines")),
        ("/other:review x", None),  # not a configured server (a command file's namespace, say)
        ("/usr/bin/env", None),
        ("/rich", None),
        ("review it", None),
    ],
)
def test_a_prompt_command_is_found_only_for_a_configured_server(typed, found):
    assert find_prompt_command(typed, {"rich": object()}) == found


def test_arguments_are_named_or_fill_the_required_ones_in_order_the_last_taking_the_rest():
    assert arguments_for(REVIEW, "path=a.py") == {"path": "a.py"}
    assert arguments_for(REVIEW, "a.py") == {"path": "a.py"}
    assert arguments_for(REVIEW, "focus=speed a.py") == {"focus": "speed", "path": "a.py"}
    assert arguments_for(REVIEW, "'my file.py' focus=speed") == {"path": "my file.py", "focus": "speed"}
    two = McpPromptInfo("p", "", (McpPromptArgument("a", True), McpPromptArgument("b", True)))
    assert arguments_for(two, "x the rest of it") == {"a": "x", "b": "the rest of it"}
    assert usage_hint(REVIEW) == "path=… [focus=…]"


def test_a_p_task_that_names_a_prompt_sends_its_text_and_a_missing_argument_is_an_error(
    server, workspace, isolated_home
):
    config = toml_for(demo_settings("rich", "--rich")) + toml_for(demo_settings("classic", "--classic"))
    (isolated_home / "config.toml").write_text(config)
    server.handler = lambda body: text("ok")
    done = ask(server, workspace, "/classic:commit_message fix the login bug")
    assert done.returncode == 0, done.stderr
    assert server.chat_requests()[-1]["messages"][-1]["content"] == (
        "Write a conventional commit message for: fix the login bug"
    )
    assert "/classic:commit_message: the prompt of the MCP server classic" in done.stderr
    done = ask(server, workspace, "/mcp:rich:review path=a.py focus=style")
    assert done.returncode == 0, done.stderr
    assert server.chat_requests()[-1]["messages"][-1]["content"].startswith("Please review a.py, looking for style.")
    sent = len(server.chat_requests())
    done = ask(server, workspace, "/rich:review")
    assert done.returncode == 1 and "/rich:review needs path: /rich:review path=… focus=…" in done.stderr
    assert "Traceback" not in done.stderr and len(server.chat_requests()) == sent  # nothing sent
