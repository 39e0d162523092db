"""The `nanohermes acp` process: JSON-RPC on stdin/stdout, nothing else on either.

`serve` is the command: the relay (relay.py), each editor session in a process of its own;
`serve_sessions` is one such process (child.py), the agent itself.

The protocol keeps private copies of fd 0 and 1; fd 1 then points at stderr and fd 0 at
/dev/null, so a stray print, a library's warning or a child process can neither corrupt the
stream the editor parses nor read its messages. Logs go to stderr (editors show it as the
agent's log). The process ends when the editor closes stdin, on SIGTERM, or on Ctrl-C.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import stat
import sys
import threading

STREAM_LIMIT = 50 * 2**20  # one JSON-RPC line: a prompt may embed whole files (the SDK's own default)
READ_BYTES = 65_536
EXIT_OK = 0
PARSE_ERROR, INVALID_REQUEST = -32700, -32600  # JSON-RPC 2.0's codes for a frame that is no request


def serve(flags: dict) -> int:
    """`nanohermes acp`: relay the editor's sessions to processes of their own; 128 + the signal
    (SIGTERM, SIGHUP) that ended it, else 0."""
    _log_to_stderr()
    fd_in, fd_out = _claim_stdio()
    return asyncio.run(_relay(flags, fd_in, fd_out))


def serve_sessions(flags: dict) -> int:
    """The agent: sessions served in this process, their turns on the main thread."""
    from nanohermes.acp.agent import NanoHermesAgent
    from nanohermes.acp.runner import TurnRunner
    from nanohermes.errors import SIGNAL_EXIT_BASE
    from nanohermes.signals import TERMINATING

    _log_to_stderr()
    fd_in, fd_out = _claim_stdio()
    runner = TurnRunner()
    agent = NanoHermesAgent(runner, flags)
    protocol = threading.Thread(
        target=_run_protocol, args=(agent, runner, fd_in, fd_out), name="nanohermes-acp", daemon=True
    )
    protocol.start()
    _warm_up()
    for signum in TERMINATING:  # not Terminated (signals.py): a turn stops as on Ctrl-C, then the process ends
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, runner.on_terminate)
    try:
        runner.serve_forever()
    finally:
        agent.close()  # background tasks and MCP servers stop, sessions are saved
    return EXIT_OK if runner.stopped_by is None else SIGNAL_EXIT_BASE + runner.stopped_by


def _warm_up() -> None:
    """Import what a session's runtime needs now, while this process waits as the relay's spare
    (relay.py): a session/new then costs only the runtime's build (openai alone is ~0.4 s)."""
    import openai  # noqa: F401

    import nanohermes.configure
    import nanohermes.runtime  # noqa: F401


def _log_to_stderr() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine("nanohermes acp: %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])


async def _relay(flags: dict, fd_in: int, fd_out: int) -> int:
    from nanohermes.acp.relay import Relay
    from nanohermes.errors import SIGNAL_EXIT_BASE
    from nanohermes.signals import TERMINATING

    loop = asyncio.get_running_loop()
    loop.set_exception_handler(_log_loop_error)
    incoming, writer = await _streams(fd_in, fd_out)
    relay = Relay(flags, lambda message: writer.write(json.dumps(message).encode() + b"\n"))
    reading = asyncio.ensure_future(_relay_frames(incoming, relay, writer))
    stopped_by: list[int] = []

    def stop(signum: int) -> None:
        stopped_by.append(signum)
        reading.cancel()

    for signum in (signal.SIGINT, *TERMINATING):
        if signal.getsignal(signum) != signal.SIG_IGN:
            loop.add_signal_handler(signum, stop, signum)
    try:
        await reading
    except asyncio.CancelledError:
        pass
    ended_by = next((n for n in stopped_by if n != signal.SIGINT), None)  # Ctrl-C: the sessions see it too
    await relay.close(ended_by)
    return EXIT_OK if ended_by is None else SIGNAL_EXIT_BASE + ended_by


async def _relay_frames(incoming: asyncio.StreamReader, relay, writer) -> None:
    """Each frame from the editor to the relay: a JSON object, or refused as _screen_frames does."""
    while frame := await read_frame(incoming):
        if not frame.strip():
            continue
        if frame.lstrip()[:1] != b"{":
            _refuse(frame, writer)
            continue
        try:
            message = json.loads(frame)
        except ValueError:
            logging.getLogger("nanohermes.acp").warning("a frame was skipped: it is not JSON")
            continue
        try:
            await relay.from_editor(message)
        except Exception as exc:  # a session's process could not start: the request fails, the relay goes on
            logging.getLogger("nanohermes.acp").warning("a request failed: %s", exc)
            if "id" in message and "method" in message:
                error = {"code": -32603, "message": f"NanoHermes could not start the session's process: {exc}"}
                writer.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode() + b"\n")


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


def _claim_stdio() -> tuple[int, int]:
    fd_in, fd_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return fd_in, fd_out


def _run_protocol(agent, runner, fd_in: int, fd_out: int) -> None:
    try:
        asyncio.run(_protocol(agent, fd_in, fd_out))
    except Exception as exc:  # the connection broke: say so in one line, then end the process
        logging.getLogger("nanohermes.acp").warning("the connection ended: %s", exc)
    finally:
        runner.stop()


async def _protocol(agent, fd_in: int, fd_out: int) -> None:
    from acp import run_agent

    loop = asyncio.get_running_loop()
    loop.set_exception_handler(_log_loop_error)
    incoming, writer = await _streams(fd_in, fd_out)
    requests = asyncio.StreamReader(limit=STREAM_LIMIT)
    screen = asyncio.create_task(_screen_frames(incoming, requests, writer))
    try:
        # session/close is stable in the protocol's schema (v1) but the SDK still routes it as unstable
        await run_agent(agent, writer, requests, use_unstable_protocol=True)
    finally:
        screen.cancel()


async def _streams(fd_in: int, fd_out: int):
    """The editor's frames (a reader) and our answers (a writer), on whatever fds 0 and 1 were."""
    loop = asyncio.get_running_loop()
    incoming = asyncio.StreamReader(limit=STREAM_LIMIT)
    if _pollable(fd_in):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(incoming), os.fdopen(fd_in, "rb", 0))
    else:  # a file or /dev/null: epoll cannot watch it, a thread reads it
        threading.Thread(target=_feed, args=(loop, incoming, fd_in), name="nanohermes-acp-in", daemon=True).start()
    if _pollable(fd_out):
        transport, flow = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(fd_out, "wb", 0))
    else:
        transport, flow = _BlockingWrites(fd_out), asyncio.streams.FlowControlMixin()
    return incoming, asyncio.StreamWriter(transport, flow, None, loop)


async def _screen_frames(incoming: asyncio.StreamReader, requests: asyncio.StreamReader, writer) -> None:
    """Pass on the frames that are JSON objects; answer any other frame with JSON-RPC's error.
    The SDK takes every parsed frame for an object: one `42`, `null` or batch array ended its
    receive loop, and with it the process and every open session."""
    try:
        while frame := await read_frame(incoming):
            if frame.lstrip()[:1] in (b"{", b""):  # an object (or blank, or broken: the SDK skips those)
                requests.feed_data(frame)
                continue
            _refuse(frame, writer)
    finally:
        requests.feed_eof()


async def read_frame(reader: asyncio.StreamReader) -> bytes:
    """One newline-ended frame, however long (the SDK's own reading), b"" at the end."""
    parts = []
    while True:
        try:
            parts.append(await reader.readuntil(b"\n"))
            return b"".join(parts)
        except asyncio.LimitOverrunError as exc:
            parts.append(await reader.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:
            return b"".join([*parts, exc.partial])


def _refuse(frame: bytes, writer) -> None:
    code, why = _refusal(frame)
    logging.getLogger("nanohermes.acp").warning("a frame was refused: %s", why)
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": why}}
    writer.write(json.dumps(error).encode() + b"\n")


def _refusal(frame: bytes) -> tuple[int, str]:
    try:
        value = json.loads(frame)
    except ValueError:
        return PARSE_ERROR, "Parse error: the frame is not JSON"
    return INVALID_REQUEST, f"Invalid Request: a message must be a JSON object, not {_JSON_KINDS[type(value)]}"


_JSON_KINDS = {list: "an array (a batch)", str: "a string", int: "a number", float: "a number", bool: "a boolean"}
_JSON_KINDS[type(None)] = "null"


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


def _log_loop_error(loop, context: dict) -> None:
    """One line in the log instead of asyncio's traceback."""
    error = context.get("exception")
    logging.getLogger("nanohermes.acp").warning("%s%s", context.get("message", "error"), f": {error}" if error else "")
