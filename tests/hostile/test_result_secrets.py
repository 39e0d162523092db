"""Issue 48, item 3: a tool's result is redacted once, as the transcript records it, not as the tool
gives it. What sees a result before that must still never cut or carry a secret: the result cap
must not leave a secret's first characters where no redaction finds them, and a PostToolUse hook
reads the output redacted (a secret with non-ASCII letters too, which JSON's \\u escapes would
hide from the redactor)."""

from __future__ import annotations

import json

import pytest

from nanohermes.hooks import Hooks
from nanohermes.hooks.settings import HookSpec
from nanohermes.redact import Redactor
from nanohermes.tools import ToolContext, dispatch, tool
from tests.support.agents import make_agent
from tests.support.hook_scripts import logged, write_scripts
from tests.support.scripted_server import call, text

TOKEN = "ghp_live_0123456789abcdefXYZ"
PASSWORD = "pässwört-0123456789-geheim"  # non-ASCII: json.dumps writes ä as \u00e4
SECRETS = Redactor.of([("GITHUB_TOKEN", TOKEN), ("DB_PASSWORD", PASSWORD)])
CAP = 2_000  # the result cap of these tests' tool context


def printing(text: str):
    @tool(params={})
    def prints(ctx) -> str:
        """Prints a fixed text."""
        return text

    return prints


@pytest.mark.parametrize("form", [TOKEN, TOKEN.replace("_", "\\_")])  # as printed, and Markdown-escaped
def test_the_result_cap_never_cuts_a_secret_in_two(workspace, isolated_home, form):
    ctx = ToolContext(workspace=workspace, home=isolated_home, max_output=CAP, redactor=SECRETS)
    for into in range(1, len(form)):  # the cap falls after `into` characters of the secret
        before = "a" * (CAP - into)
        output = before + form + "b" * 500
        prints = printing(output)
        result = dispatch(ctx, {prints.name: prints}, prints.name, "{}")
        kept, note = result.content.split("\n… output truncated ", 1)
        assert kept == before, into  # the secret's start is cut with the rest, never left on its own
        assert note == f"({len(output) - len(before)} bytes omitted)" and result.full == output


def test_a_post_tool_use_hook_reads_the_output_redacted_whatever_its_letters(server, workspace, tmp_path):
    scripts, log = write_scripts(tmp_path / "s"), tmp_path / "log"
    spec = HookSpec("PostToolUse", f"{scripts['logger.py']} {log}")
    hooks = Hooks([spec], workspace, ("s1", "/tmp/s1.jsonl"), redact=SECRETS.text)  # as runtime.py gives it
    prints = printing(f"db password {PASSWORD}, token {TOKEN}, café ünïcode kept")
    server.add(call(prints.name, {}), text("done"))
    make_agent(server, workspace, tools=[prints], hooks=hooks, redactor=SECRETS).run_turn("go")
    [payload] = logged(log)
    output = payload["tool_response"]["output"]
    assert output == "db password [redacted: DB_PASSWORD], token [redacted: GITHUB_TOKEN], café ünïcode kept"
    assert PASSWORD not in json.dumps(payload, ensure_ascii=False) and TOKEN not in log.read_text()
    sent = json.dumps(server.chat_requests(), ensure_ascii=False)
    assert PASSWORD not in sent and "[redacted: DB_PASSWORD]" in sent
