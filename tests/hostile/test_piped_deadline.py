"""Issue 44, item 7: a trickling stdin (`tail -f log | nanohermes -p "watch this"`) was read for ever;
the 5-second rule covered only a silent one. Reading has a total deadline (injected here, 30 s in
the product); what came by then is sent, said to be a part; a task (`-p -`) still open is refused.
A real pipe, written to by a real process that never stops."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from nanohermes.piped import TaskStillOpen, read_piped, read_task, with_piped

DEADLINE_S = 1.0  # injected: the product's READ_DEADLINE_S is 30
SLACK_S = 30.0  # a loaded machine may be slow to return; a read that never ends would never return
TRICKLE = "import sys, time\nwhile True:\n    print('log line', flush=True)\n    time.sleep(0.05)\n"


@pytest.fixture
def trickling():
    """stdin as `tail -f` gives it: a pipe a process keeps writing to and never closes."""
    writer = subprocess.Popen([sys.executable, "-c", TRICKLE], stdout=subprocess.PIPE)
    try:
        yield writer.stdout
    finally:
        writer.kill()
        writer.wait()


def test_a_trickling_pipe_is_read_until_the_deadline_and_what_came_is_sent_as_a_part(trickling):
    start = time.monotonic()
    piped = read_piped(trickling, deadline_s=DEADLINE_S)
    assert DEADLINE_S <= time.monotonic() - start < DEADLINE_S + SLACK_S
    assert piped.still_open == DEADLINE_S and piped.text.startswith("log line\n") and piped.total_bytes > 0
    request, note = with_piped("watch this", piped, cap=100_000)
    assert f"the pipe was still open after {DEADLINE_S:g} s: what came by then; the rest was not read" in request
    assert request.startswith("watch this\n\n[stdin: ") and "still open" in note


def test_a_task_on_a_pipe_that_never_ends_is_refused_not_cut(trickling):
    with pytest.raises(TaskStillOpen, match=f"stdin was still open after {DEADLINE_S:g} s"):
        read_task(trickling, deadline_s=DEADLINE_S)


def test_a_pipe_that_ends_in_time_is_read_whole():
    read_end, write_end = os.pipe()
    os.write(write_end, b"all of it\n")
    os.close(write_end)
    with os.fdopen(read_end, "rb") as stdin:
        piped = read_piped(stdin, deadline_s=DEADLINE_S)
    assert piped.text == "all of it\n" and not piped.still_open
