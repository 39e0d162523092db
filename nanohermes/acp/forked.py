"""Session processes forked from a warm server (multiprocessing's forkserver): a new session's
process starts in milliseconds with the agent's modules (the ACP SDK, the runtime: ~1 s
of imports) already loaded, instead of a fresh interpreter importing them again.

The forkserver is one process, started on first use with those modules preloaded and no
threads; each session's process is a fork of it, so it is single-threaded until it starts its
own protocol thread. It talks to the relay over two socket pairs, one each way, which become its
stdin and stdout (fd 0 and 1): the agent in it is the same `serve_sessions` as anywhere. (One
socket for both would not do: asyncio takes data arriving on the fd it writes to as the peer
having closed it.)
Its stderr is the relay's (the editor's log). Session processes are the forkserver's children
(it reaps them); the relay knows each one's pid, signals it by pid and learns its end from its
sentinel.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import socket
import sys

from nanohermes.acp.frames import READ_LIMIT

# What a session's process needs, imported once in the forkserver (the ACP SDK, the runtime).
PRELOADED = [
    "acp",
    "nanohermes.acp.agent",
    "nanohermes.acp.sessions",
    "nanohermes.configure",
    "nanohermes.runtime",
]


def _context():
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOADED)
    return context


class Forked:
    """A session's process, as asyncio.subprocess.Process is for the relay's needs."""

    def __init__(self, process, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self._process, self.stdout, self.stdin = process, reader, writer
        self.pid = process.pid
        self._ended = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().add_reader(process.sentinel, self._on_end)

    def _on_end(self) -> None:
        asyncio.get_running_loop().remove_reader(self._process.sentinel)
        self._process.join(0)
        if not self._ended.done():
            self._ended.set_result(self._process.exitcode)

    @property
    def returncode(self) -> int | None:
        return self._ended.result() if self._ended.done() else None

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signum)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    async def wait(self) -> int | None:
        return await asyncio.shield(self._ended)


async def start(flags: dict) -> Forked:
    to_them, their_input = socket.socketpair()
    from_them, their_output = socket.socketpair()
    process = _context().Process(target=session_main, args=(their_input, their_output, flags), daemon=True)

    def launch() -> None:  # the first start also starts the forkserver (~1 s): not on the event loop
        try:
            process.start()
        finally:  # sent to the forkserver by now: ours go (closed here, never under a start still sending them)
            their_input.close()
            their_output.close()

    await asyncio.to_thread(launch)
    reader, unused_writer = await asyncio.open_connection(sock=from_them, limit=READ_LIMIT)
    unused_reader, writer = await asyncio.open_connection(sock=to_them)
    forked = Forked(process, reader, writer)
    forked.unused = (unused_reader, unused_writer)  # a StreamWriter collected closes its socket
    return forked


def session_main(given: socket.socket, taken: socket.socket, flags: dict) -> None:
    """In the forked process: the sockets are stdin and stdout, then the agent serves."""
    from nanohermes import signals
    from nanohermes.acp.sessions import serve_sessions
    from nanohermes.crash import report_crash

    os.dup2(given.fileno(), 0)
    os.dup2(taken.fileno(), 1)
    given.close()
    taken.close()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signals.install()
    try:
        code = serve_sessions(flags)
    except Exception as exc:  # one paragraph in the editor's log, the traceback in a file
        print(report_crash(exc), file=sys.stderr)
        code = 1
    sys.exit(code)
