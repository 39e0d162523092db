"""Sessions side by side: `nanohermes acp` gives each editor session a process of its own and
relays the protocol's messages between the editor and those processes.

Why processes: a turn is stopped the one way the loop knows, KeyboardInterrupt from SIGINT, which
Python delivers to a process's main thread only (runner.py). One process per session keeps that
exact: two sessions' turns run at once, and a cancel stops its own session's turn and no other.
It also makes releasing a session certain: session/close (or the cap below) ends its process, and
with it the runtime, its MCP servers and background tasks.

Each session's process is forked from a warm server (forked.py) and runs main.serve_sessions, the
whole agent, serving that one session. One spare is kept forked and initialized, so a new session
costs only its runtime's build. The relay itself only routes: a request that names a session goes to that
session's process (one that names no open session answers the protocol's "resource not found"),
session/new and session/load go to the spare, anything else (initialize, session/list) to the
spare too; a request a session's process sends (a permission question, a file read) goes to the
editor under an id of the relay's, and the editor's answer back to it. Past MAX_OPEN_SESSIONS the
least recently used idle session's process is ended, as if closed.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import signal
import time
from dataclasses import dataclass

from nanohermes.acp import forked
from nanohermes.acp.frames import Refusal, read_frame, refuse, screen
from nanohermes.acp.stdio import log_loop_error, streams
from nanohermes.errors import SIGNAL_EXIT_BASE
from nanohermes.signals import TERMINATING

log = logging.getLogger("nanohermes.acp")

MAX_OPEN_SESSIONS = 8  # each is a process with a runtime and its MCP servers; an editor may never close one
RESOURCE_NOT_FOUND, INTERNAL_ERROR = -32002, -32603
OPENING = ("session/new", "session/load")


@dataclass
class Sent:
    """A request we sent a session's process: whose it was, and what it was about."""

    their_id: object  # the editor's id for it (None: the relay's own, such as an initialize)
    method: str
    session: str | None = None  # the session it names (session/load's, before its answer)
    done: asyncio.Future | None = None  # the relay's own request waits here for its answer


class Child:
    """One session's process and what is in flight with it."""

    def __init__(self, process):
        self.process = process  # forked.Forked
        self.ended = False  # its input was closed
        self.session: str | None = None
        self.waiting: dict[int, Sent] = {}  # by our id
        self.greeting: dict | None = None  # its answer to initialize
        self.used = time.monotonic()

    @property
    def busy(self) -> bool:
        return any(sent.method == "session/prompt" for sent in self.waiting.values())

    @property
    def alive(self) -> bool:
        return self.process.returncode is None and not self.ended

    def send(self, message: dict) -> None:
        if not self.ended and not self.process.stdin.is_closing():
            self.process.stdin.write(json.dumps(message).encode() + b"\n")

    def end(self) -> None:
        """End its input: it stops its turn (as when an editor goes away), saves and exits; what it
        still says is read to the end."""
        if not self.ended and not self.process.stdin.is_closing():
            self.process.stdin.write_eof()
        self.ended = True


class Relay:
    def __init__(self, flags: dict, to_editor):
        self.flags, self.to_editor = flags, to_editor
        self.children: list[Child] = []  # every process still running, sessions and the spare
        self.running: set[asyncio.Task] = set()  # each process's reader
        self.sessions: dict[str, Child] = {}
        self.spare: asyncio.Task | None = None
        self.initialize: dict | None = None  # the editor's initialize params, for every new process
        self.asked: dict[int, tuple[Child, object]] = {}  # our id toward the editor -> (process, its id)
        self._ids = itertools.count(1)

    # -- from the editor ----------------------------------------------------------------------

    async def from_editor(self, message: dict) -> None:
        method, has_id = message.get("method"), "id" in message
        if method is None:
            if has_id and message["id"] in self.asked:  # the editor answers a question a process asked
                child, their_id = self.asked.pop(message["id"])
                child.send({**message, "id": their_id})
            return
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        session = params.get("sessionId")
        if method == "initialize" and has_id:
            return await self._greet(message, params)
        if isinstance(session, str) and (child := self.sessions.get(session)) is not None:
            child.used = time.monotonic()
            return self._forward(child, message, method)
        if isinstance(session, str) and method not in OPENING:
            if has_id:
                self._answer_error(
                    message["id"],
                    RESOURCE_NOT_FOUND,
                    f"No open session {session!r}: create one (session/new) or load it (session/load).",
                )
            return
        if method in OPENING:
            await self._make_room()
        child = await self._take_spare() if method in OPENING else await self._the_spare()
        self._forward(child, message, method)

    async def _greet(self, message: dict, params: dict) -> None:
        """initialize: the spare is initialized with the editor's own params, and its answer is ours."""
        self.initialize = params
        child = await self._the_spare()
        if child.greeting is None:  # it started before the editor said who it is
            return self._forward(child, message, "initialize")
        self.to_editor({**child.greeting, "id": message["id"]})

    def _forward(self, child: Child, message: dict, method: str) -> None:
        if "id" not in message:
            return child.send(message)
        ours = next(self._ids)
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        child.waiting[ours] = Sent(message["id"], method, params.get("sessionId"))
        child.send({**message, "id": ours})

    def _answer_error(self, their_id, code: int, text: str) -> None:
        self.to_editor({"jsonrpc": "2.0", "id": their_id, "error": {"code": code, "message": text}})

    # -- from a session's process -----------------------------------------------------------

    def from_child(self, child: Child, message: dict) -> None:
        if "method" not in message:  # an answer to what we sent it
            sent = child.waiting.pop(message.get("id"), None)
            if sent is None:
                return
            if sent.done is not None:
                return sent.done.set_result(message) if not sent.done.done() else None
            self._answered(child, sent, message)
            self.to_editor({**message, "id": sent.their_id})
        elif "id" in message:  # its question for the editor
            ours = next(self._ids)
            self.asked[ours] = (child, message["id"])
            self.to_editor({**message, "id": ours})
        else:
            self.to_editor(message)

    def _answered(self, child: Child, sent: Sent, message: dict) -> None:
        """A session opened in `child`, or closed: keep the routing table in step."""
        result = message.get("result")
        if sent.method in OPENING and isinstance(result, dict) and child.session is None:
            child.session = result.get("sessionId") or sent.session
            self.sessions[child.session] = child
        elif sent.method in OPENING and child.session is None:  # it failed: the process is still a blank spare
            self._return_spare(child)
        elif sent.method == "session/close" and "error" not in message:
            self._drop(child)

    # -- processes --------------------------------------------------------------------------

    async def _the_spare(self) -> Child:
        spare = self.spare
        if spare is None or (spare.done() and (spare.cancelled() or spare.exception() or not spare.result().alive)):
            self.spare = asyncio.ensure_future(self._start())
        return await asyncio.shield(self.spare)

    async def _take_spare(self) -> Child:
        child = await self._the_spare()
        self.spare = asyncio.ensure_future(self._start())  # the next one starts while this one opens
        return child

    def _return_spare(self, child: Child) -> None:
        """A process whose session/new or session/load failed is as good as a new spare."""
        old, self.spare = self.spare, asyncio.get_running_loop().create_future()
        self.spare.set_result(child)
        if old is not None:  # the one started meanwhile is not needed: it ends once it is up
            old.add_done_callback(lambda done: done.cancelled() or done.exception() or self._drop(done.result()))

    async def _start(self) -> Child:
        child = Child(await forked.start(self.flags))
        self.children.append(child)
        reader = asyncio.ensure_future(self._read(child))
        self.running.add(reader)
        reader.add_done_callback(self.running.discard)
        if self.initialize is not None:
            done = asyncio.get_running_loop().create_future()
            ours = next(self._ids)
            child.waiting[ours] = Sent(None, "initialize", done=done)
            child.send({"jsonrpc": "2.0", "id": ours, "method": "initialize", "params": self.initialize})
            greeting = await done
            child.greeting = greeting if "result" in greeting else None
        return child

    async def _read(self, child: Child) -> None:
        try:
            while line := await read_frame(child.process.stdout, limit=None):  # our own process: any length
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict):
                    self.from_child(child, message)
        finally:
            await child.process.wait()
            self._gone(child)
            if child in self.children:
                self.children.remove(child)

    def _gone(self, child: Child) -> None:
        """Its process ended: what it was asked is answered, its session is no longer open."""
        for sent in child.waiting.values():
            if sent.done is not None and not sent.done.done():
                sent.done.set_result({"error": {"code": INTERNAL_ERROR, "message": "the process ended"}})
            elif sent.their_id is not None:
                self._answer_error(sent.their_id, INTERNAL_ERROR, "The session's process ended (its log says why).")
        child.waiting.clear()
        self._drop(child)

    def _drop(self, child: Child) -> None:
        """Its session is no longer open; its process ends (the reader sees it go)."""
        child.end()
        if child.session is not None and self.sessions.get(child.session) is child:
            del self.sessions[child.session]

    async def _make_room(self) -> None:
        idle = sorted((c for c in self.sessions.values() if not c.busy), key=lambda c: c.used)
        if len(self.sessions) >= MAX_OPEN_SESSIONS and idle:
            log.info("session %s released: %d sessions are open", idle[0].session, len(self.sessions))
            self._drop(idle[0])

    async def close(self, signum: int | None = None) -> None:
        """The editor went away (or a signal came): every process stops its turn, saves and ends."""
        if self.spare is not None and not self.spare.done():
            await asyncio.wait([self.spare])  # a fork takes milliseconds: it ends with the others
        for child in list(self.children):
            if child.process.returncode is not None:
                continue
            if child.session is None:  # a spare holds nothing to save: it ends now
                child.process.terminate()
            elif signum is not None:
                child.process.send_signal(signum)
            child.end()
        await asyncio.gather(*(c.process.wait() for c in list(self.children)), return_exceptions=True)
        await asyncio.gather(*self.running, return_exceptions=True)


async def relay_stdio(flags: dict, fd_in: int, fd_out: int) -> int:
    """The relay between the editor on `fd_in`/`fd_out` and the sessions' processes, until the
    editor closes its end or a signal comes; the command's exit code."""
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(log_loop_error)
    incoming, writer = await streams(fd_in, fd_out)
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
    return 0 if ended_by is None else SIGNAL_EXIT_BASE + ended_by


async def _relay_frames(incoming: asyncio.StreamReader, relay, writer) -> None:
    """Each frame from the editor to the relay: a JSON object, or refused (frames.screen) while every
    session goes on being served."""
    while frame := await read_frame(incoming):
        message = screen(frame)
        if isinstance(message, Refusal):
            refuse(message, writer)
            continue
        if message is None:
            continue
        try:
            await relay.from_editor(message)
        except Exception as exc:  # a session's process could not start: the request fails, the relay goes on
            logging.getLogger("nanohermes.acp").warning("a request failed: %s", exc)
            if "id" in message and "method" in message:
                error = {"code": INTERNAL_ERROR, "message": f"NanoHermes could not start the session's process: {exc}"}
                writer.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode() + b"\n")
