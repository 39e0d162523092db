"""`nanohermes acp`'s stdin and stdout: JSON-RPC frames on them, nothing else.

The protocol keeps private copies of fd 0 and 1; fd 1 then points at stderr and fd 0 at
/dev/null, so a stray print, a library's warning or a child process can neither corrupt the
stream the editor parses nor read its messages. Logs go to stderr (editors show it as the
agent's log), one line each. Frames are read and screened in frames.py.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import threading

from nanohermes.acp.frames import READ_LIMIT

READ_BYTES = 65_536


class _OneLine(logging.Formatter):
    """A log record as one line: an exception's message, never its traceback (libraries log
    tracebacks for a malformed message; the editor's log should say what, not where)."""

    def format(self, record: logging.LogRecord) -> str:
        record = logging.makeLogRecord(record.__dict__)
        if record.exc_info:
            record.msg, record.args = f"{record.getMessage()}: {record.exc_info[1]}", ()
            record.exc_info = record.exc_text = None
        record.stack_info = None
        return super().format(record)


def log_to_stderr() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine("nanohermes acp: %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])


def claim_stdio() -> tuple[int, int]:
    fd_in, fd_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return fd_in, fd_out


async def streams(fd_in: int, fd_out: int):
    """The editor's frames (a reader) and our answers (a writer), on whatever fds 0 and 1 were."""
    loop = asyncio.get_running_loop()
    incoming = asyncio.StreamReader(limit=READ_LIMIT)  # a longer frame is read in pieces (frames.read_frame)
    if _pollable(fd_in):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(incoming), os.fdopen(fd_in, "rb", 0))
    else:  # a file or /dev/null: epoll cannot watch it, a thread reads it
        threading.Thread(target=_feed, args=(loop, incoming, fd_in), name="nanohermes-acp-in", daemon=True).start()
    if _pollable(fd_out):
        transport, flow = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(fd_out, "wb", 0))
    else:
        transport, flow = _BlockingWrites(fd_out), asyncio.streams.FlowControlMixin()
    return incoming, asyncio.StreamWriter(transport, flow, None, loop)


def _pollable(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


def _feed(loop, reader: asyncio.StreamReader, fd: int) -> None:
    try:
        while data := os.read(fd, READ_BYTES):
            loop.call_soon_threadsafe(reader.feed_data, data)
    except OSError:
        pass
    finally:
        loop.call_soon_threadsafe(reader.feed_eof)


class _BlockingWrites(asyncio.WriteTransport):
    """Writes to a file descriptor epoll cannot watch (a regular file), one blocking write at a time."""

    def __init__(self, fd: int):
        super().__init__()
        self._fd, self._closing = fd, False

    def write(self, data) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def can_write_eof(self) -> bool:
        return False


def log_loop_error(loop, context: dict) -> None:
    """One line in the log instead of asyncio's traceback."""
    error = context.get("exception")
    logging.getLogger("nanohermes.acp").warning("%s%s", context.get("message", "error"), f": {error}" if error else "")
