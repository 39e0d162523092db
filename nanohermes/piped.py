"""Text piped into a one-shot run: `git diff | nanohermes -p "review this diff"` sends the task,
then the piped text, fenced and capped like a tool result (the cap noted), as Claude Code's
`cat logs.txt | claude -p "explain"` does. With `-p -` stdin is the task itself.

Reading has a total deadline, READ_DEADLINE_S from the start: a pipe that never ends (`tail -f log
| nanohermes -p "watch this"`) is read until then, and what was read by then is sent, its head
saying the pipe was still open and the rest was not read. A task itself (`-p -`) is never cut so:
still open at the deadline, the run is refused (exit 2) and says why.

Reading is the edge (read_piped); what the model is sent is pure (with_piped).
"""

from __future__ import annotations

import os
import re
import select
import sys
import time
from dataclasses import dataclass

from nanohermes.context.budget import MAX_TOOL_RESULT_BYTES
from nanohermes.text import fit_utf8

# A command piped in (git diff, a test run, cat) writes within a second or two. A parent that
# leaves stdin an open pipe and never writes to it (a CI step, a program starting us with
# default pipes) must not hang the run: after this long without a byte or the end, the task
# runs alone and stderr says why.
FIRST_BYTE_WAIT_S = 5.0
# Kept of what is piped: the largest cap one tool result ever gets (the window's cap is at most
# this); the rest is counted, not held, so `cat` of a huge file costs no memory.
KEPT_BYTES = MAX_TOOL_RESULT_BYTES
READ_CHUNK_BYTES = 65_536
# A command piped in ends within seconds; a pipe still open after this long is a stream (tail -f,
# a server's log) that would hold the run for ever: what came by then is what is sent.
READ_DEADLINE_S = 30.0
LEFT_UNREAD = (
    f"nothing arrived on stdin within {FIRST_BYTE_WAIT_S:g} s; the task runs without it "
    "(when a program starts nanohermes with nothing to pipe, give it stdin from /dev/null)"
)


@dataclass(frozen=True)
class Piped:
    text: str = ""  # the start of what was piped, decoded (bytes that are not UTF-8 become U+FFFD)
    total_bytes: int = 0  # all that was piped, counted to the end
    silent: bool = False  # nothing came within FIRST_BYTE_WAIT_S: stdin was left unread
    still_open: float = 0.0  # the pipe had not ended at this deadline (seconds): the rest was not read

    @property
    def empty(self) -> bool:
        return not self.text.strip()


class TaskStillOpen(Exception):
    """`-p -`: stdin had not ended at the deadline; the message says so and what to do."""


def read_task(stdin=None, deadline_s: float = READ_DEADLINE_S) -> str:
    """All of stdin, as the task (`-p -`); bytes that are not UTF-8 (a binary diff) become U+FFFD.
    TaskStillOpen when the pipe has not ended `deadline_s` seconds from now."""
    stdin = stdin or sys.stdin
    fd = _fd(stdin)
    if fd is None:  # an in-memory stream (a test's runner): it never blocks
        data = stdin.read()
        return data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    ends = time.monotonic() + deadline_s
    chunks = []
    while chunk := _read_before(fd, ends):
        chunks.append(chunk)
    if chunk is None:
        raise TaskStillOpen(
            f"stdin was still open after {deadline_s:g} s, so the task (-p -) never ended; nothing was sent. "
            "Close the pipe, or give the task as -p TEXT and pipe the rest beside it."
        )
    return b"".join(chunks).decode("utf-8", "replace")


def read_piped(stdin=None, wait_s: float = FIRST_BYTE_WAIT_S, deadline_s: float = READ_DEADLINE_S) -> Piped | None:
    """What was piped into the run beside a task, read until it ends or `deadline_s` seconds have
    passed (Piped.still_open); None when stdin is a terminal (a person types there: nothing is piped)."""
    stdin = stdin or sys.stdin
    if stdin is None or stdin.closed or stdin.isatty():
        return None
    stream = getattr(stdin, "buffer", stdin)
    fd = _fd(stdin)
    ends = time.monotonic() + deadline_s
    if fd is not None and not select.select([fd], [], [], min(wait_s, deadline_s))[0]:
        return Piped(silent=True)
    kept, total = b"", 0
    while chunk := (_read_before(fd, ends) if fd is not None else _as_bytes(stream.read(READ_CHUNK_BYTES))):
        total += len(chunk)
        if len(kept) < KEPT_BYTES:
            kept += chunk[: KEPT_BYTES - len(kept)]
    return Piped(kept.decode("utf-8", "replace"), total, still_open=deadline_s if chunk is None else 0.0)


def _fd(stdin) -> int | None:
    try:
        return stdin.fileno()
    except (OSError, ValueError):  # an in-memory stream (a test's runner): it never blocks
        return None


def _read_before(fd: int, ends: float) -> bytes | None:
    """The next bytes of `fd` (b"" at its end), or None when none come before `ends` (monotonic)."""
    left = ends - time.monotonic()
    if left <= 0 or not select.select([fd], [], [], left)[0]:
        return None
    return os.read(fd, READ_CHUNK_BYTES)


def _as_bytes(data) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def with_piped(task: str, piped: Piped, cap: int) -> tuple[str, str]:
    """(the request: the task, then the piped text fenced and cut at `cap` bytes with a note;
    the note for the user). The fence is longer than any run of backticks in the text, so the
    text cannot end it."""
    shown = fit_utf8(piped.text, cap)
    shown_bytes = len(shown.encode("utf-8"))
    size = f"{piped.total_bytes:,} bytes"
    if piped.still_open:  # said first: the model must not take a stream's first part for the whole
        size = (
            f"{size} (the pipe was still open after {piped.still_open:g} s: what came by then; the rest was not read)"
        )
    if shown_bytes < piped.total_bytes:
        first, cut = f"the first {shown_bytes:,}", f"{piped.total_bytes - shown_bytes:,} bytes cut"
        head = f"[stdin: {size} piped in with the task; {first} follow ({cut} at the cap on one tool result)]"
        note = f"stdin: {size} piped in; the model gets {first} (the cap on one tool result)"
    else:
        head = f"[stdin: {size} piped in with the task, below]"
        note = f"stdin: {size} piped in, sent with the task"
    fence = "`" * max(3, 1 + max(map(len, re.findall("`+", shown)), default=0))
    return f"{task}\n\n{head}\n{fence}\n{shown}\n{fence}", note


def request_with(task: str, piped: Piped | None, agent, emit) -> str:
    """The request of a one-shot run: the task, then what was piped in, capped as one tool
    result is for the model's window (`agent` learns it first); `emit` tells the front ends
    what was sent, or that stdin was left unread."""
    from nanohermes import events as ev

    if piped is None or (piped.empty and not piped.silent):
        return task
    if piped.silent:
        emit(ev.Notice(LEFT_UNREAD, "warning"))
        return task
    agent.learn_window()
    request, note = with_piped(task, piped, agent.settings.tool_result_bytes)
    emit(ev.Notice(note, "warning" if piped.still_open else "info"))
    return request
