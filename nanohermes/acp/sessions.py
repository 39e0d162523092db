"""One process serving editor sessions (the relay forks one per session: relay.py, forked.py):
the protocol on a background asyncio thread, turns on the main thread (runner.py). The process
ends when the relay closes its stdin, on SIGTERM, or on Ctrl-C.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading

from nanohermes.acp.frames import RELAYED_FRAME_BYTES, Refusal, read_frame, refuse, screen
from nanohermes.acp.stdio import claim_stdio, log_loop_error, log_to_stderr, streams

EXIT_OK = 0


def serve_sessions(flags: dict) -> int:
    """The agent: sessions served in this process, their turns on the main thread."""
    from nanohermes.acp.agent import NanoHermesAgent
    from nanohermes.acp.runner import TurnRunner
    from nanohermes.errors import SIGNAL_EXIT_BASE
    from nanohermes.signals import TERMINATING

    log_to_stderr()
    fd_in, fd_out = claim_stdio()
    runner = TurnRunner()
    agent = NanoHermesAgent(runner, flags)
    protocol = threading.Thread(
        target=_run_protocol, args=(agent, runner, fd_in, fd_out), name="nanohermes-acp", daemon=True
    )
    protocol.start()
    for signum in TERMINATING:  # not Terminated (signals.py): a turn stops as on Ctrl-C, then the process ends
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, runner.on_terminate)
    try:
        runner.serve_forever()
    finally:
        agent.close()  # background tasks and MCP servers stop, sessions are saved
    return EXIT_OK if runner.stopped_by is None else SIGNAL_EXIT_BASE + runner.stopped_by


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
    loop.set_exception_handler(log_loop_error)
    incoming, writer = await streams(fd_in, fd_out)
    requests = asyncio.StreamReader(limit=RELAYED_FRAME_BYTES + 1)  # the SDK reads each screened frame whole
    screen = asyncio.create_task(_screen_frames(incoming, requests, writer))
    try:
        # session/close is stable in the protocol's schema (v1) but the SDK still routes it as unstable
        await run_agent(agent, writer, requests, use_unstable_protocol=True)
    finally:
        screen.cancel()


async def _screen_frames(incoming: asyncio.StreamReader, requests: asyncio.StreamReader, writer) -> None:
    """Pass on the frames that are JSON objects; answer any other frame with JSON-RPC's error
    (frames.screen). The SDK takes every parsed frame for an object: one `42`, `null` or batch array
    ended its receive loop, and with it the process and every open session."""
    try:
        while frame := await read_frame(incoming, RELAYED_FRAME_BYTES):
            screened = screen(frame)
            if isinstance(screened, Refusal):
                refuse(screened, writer)
            elif screened is not None:
                requests.feed_data(frame if frame.endswith(b"\n") else frame + b"\n")
    finally:
        requests.feed_eof()
