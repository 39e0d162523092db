"""`git diff | nanohermes -p "review this diff"`: text piped in beside a task reaches the model
after the task, fenced and capped like a tool result, through the real executable."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pexpect
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nanohermes.piped import FIRST_BYTE_WAIT_S, Piped, with_piped
from tests.support.scripted_server import text

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

BIN = os.path.join(os.path.dirname(sys.executable), "nanohermes")
DIFF = 'diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x = 1\n+x = 2  # "```" inside\n'


def one_shot(server, workspace, task: str, stdin, *args):
    """The CLI with `stdin` (bytes piped in, or a file object); the request the model got."""
    server.add(text("Looks fine."))
    piped = isinstance(stdin, bytes)
    r = subprocess.run(
        [BIN, "-p", task, "--base-url", server.url, *args],
        cwd=workspace,
        input=stdin if piped else None,
        stdin=None if piped else stdin,
        capture_output=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr.decode()
    return server.chat_requests()[-1]["messages"][-1]["content"], r.stderr.decode()


def test_piped_text_reaches_the_model_after_the_task_fenced_and_noted(server, workspace):
    sent, err = one_shot(server, workspace, "review this diff", DIFF.encode())
    size = len(DIFF.encode())
    assert sent == f"review this diff\n\n[stdin: {size} bytes piped in with the task, below]\n````\n{DIFF}\n````"
    assert f"· stdin: {size} bytes piped in, sent with the task" in err


def test_piped_text_longer_than_a_tool_results_cap_is_cut_with_the_cap_noted(server, workspace, isolated_home):
    (isolated_home / "config.toml").write_text("context_window = 8192\n")  # one tool result: 3,686 bytes
    log = "".join(f"line {i:05d}: nothing to see here\n" for i in range(1000))
    sent, err = one_shot(server, workspace, "explain", log.encode())
    assert "[stdin: 32,000 bytes piped in with the task; the first 3,686 follow (28,314 bytes cut" in sent
    assert "line 00000" in sent and "line 00999" not in sent and len(sent.encode()) < 3_686 + 300
    assert "· stdin: 32,000 bytes piped in; the model gets the first 3,686 (the cap on one tool result)" in err


def test_binary_piped_text_is_decoded_with_replacement_as_dash_p_does(server, workspace):
    sent, _ = one_shot(server, workspace, "what is this?", b"PK\x03\x04\xff\xfe binary\n")
    assert "PK\x03\x04\ufffd\ufffd binary" in sent


def test_dash_p_dash_still_takes_the_task_itself_from_stdin(server, workspace):
    sent, err = one_shot(server, workspace, "-", b"the task from stdin\n")
    assert sent == "the task from stdin\n" and "stdin:" not in err


def test_nothing_piped_sends_the_task_alone(server, workspace):
    sent, err = one_shot(server, workspace, "hello", subprocess.DEVNULL)
    assert sent == "hello" and "stdin" not in err


def test_a_terminal_on_stdin_is_not_read(server, workspace):
    server.add(text("Hi there."))
    child = pexpect.spawn(BIN, ["-p", "hello", "--base-url", server.url], cwd=str(workspace), timeout=30)
    child.expect(pexpect.EOF)  # finished without waiting for anything typed
    child.close()
    assert child.exitstatus == 0 and server.chat_requests()[-1]["messages"][-1]["content"] == "hello"


def test_stdin_left_open_and_silent_does_not_hang_the_run(server, workspace):
    server.add(text("Done."))
    start = time.monotonic()
    child = subprocess.Popen(  # a parent that keeps stdin open and never writes to it
        [BIN, "-p", "hello", "--base-url", server.url],
        cwd=workspace,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        child.wait(timeout=60)  # with stdin still open: communicate() would close it
    finally:
        child.stdin.close()
    out, err = child.stdout.read(), child.stderr.read()
    elapsed = time.monotonic() - start
    assert child.returncode == 0 and out == "Done.\n"
    assert f"nothing arrived on stdin within {FIRST_BYTE_WAIT_S:g} s; the task runs without it" in err
    assert FIRST_BYTE_WAIT_S <= elapsed < FIRST_BYTE_WAIT_S + 40  # start-up took 27 s beside a busy llama.cpp
    assert server.chat_requests()[-1]["messages"][-1]["content"] == "hello"


@given(st.text(alphabet=st.sampled_from("`ab\n"), max_size=60))
def test_piped_text_cannot_close_its_own_fence(piped):
    request, _ = with_piped("task", Piped(piped, len(piped.encode())), 10_000)
    fence = request.split("\n")[3]  # task, blank, header, fence
    assert set(fence) == {"`"} and fence not in piped and request.endswith("\n" + fence)
    assert request.count(fence) == 2
