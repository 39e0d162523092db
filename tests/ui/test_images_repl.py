"""Images in the REPL, through a real pty: a refused `@shot.png` is said and the line given back to
edit, nothing sent; a sent one answers and `/context` counts it by its tokens, in the REPL and in an
editor alike (slash/conversation.py's one breakdown, over the real runtime, whose ImageStore the
provider reads)."""

import pytest

from nanohermes.acp import commands as editor_commands
from nanohermes.acp.outcome_view import markdown
from nanohermes.configure import load_config
from nanohermes.runtime import build_runtime
from nanohermes.ui.commands import run_slash_command
from tests.support.images import image_bytes, image_parts
from tests.support.scripted_server import text
from tests.support.terminal import Terminal
from tests.ui.test_commands import FakeRepl


@pytest.mark.pty
@pytest.mark.subprocess
def test_a_refused_image_is_said_and_the_line_comes_back_to_edit(server, workspace):
    (workspace / "shot.png").write_bytes(image_bytes())
    term = Terminal(server, workspace, "--mode", "auto")
    term.send("what is in @shot.png?\r")
    term.wait_screen("Your request was not sent: shot.png is an image (PNG)")
    # the prompt drawn again below the refusal, with the line given back (its bytes may have come in the
    # refusal's own read: a screen to wait for, not a byte stream)
    term.wait_until(lambda lines: lines[-1] == "auto › what is in @shot.png?" and "vision = true" in lines[-2])
    assert not server.chat_requests()


def test_context_counts_an_image_by_its_tokens_in_the_repl_and_an_editor(server, workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (workspace / "shot.png").write_bytes(image_bytes(800, 600))
    server.vision = True  # llama.cpp with a projector
    server.add(text("A red box."))
    runtime = build_runtime(load_config(base_url=server.url, workspace=workspace, mode="auto"), "pics", print, None)
    try:
        repl = FakeRepl(runtime)
        runtime.agent.run_turn("what is in @shot.png?")
        assert len(image_parts(server.chat_requests()[0])) == 1
        run_slash_command(repl, "/context")
        [row] = [line for line in repl.out[-1].splitlines() if " images " in line]
        assert row.split()[1:3] == ["images", "765"] and "3,060" in row
        assert "\n| images | 765 | 3,060 | " in markdown(editor_commands.take("/context", runtime))  # an editor's
    finally:
        runtime.close()
