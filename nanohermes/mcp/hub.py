"""The connections to a session's MCP servers, on the `mcp` SDK's asyncio client.

The agent loop is synchronous; the SDK is not. So the hub owns one background thread running
an asyncio loop, started on first use, and each server one task on it (connection.py). The
loop's thread asks for a tool list, a call, a resource or a prompt and waits for the answer;
while it waits it runs what must happen on its own thread: a server's progress shown, a
server's question put to the user (`ask_user`, which the front end provides; None declines), a
server's sampling request approved by the user and answered by the session's model (`sample`).

Nothing hangs: a server has `startup_timeout` seconds to start and list its tools and
`timeout` seconds per call (moved on by progress, within a cap); one that died or never started
is a clear McpUnavailable (its last stderr lines, from its log file, say why), retried at the
next use but not more often than every RETRY_AFTER_FAILURE_S. Ctrl-C while waiting cancels the
call on the loop too.

A server whose tool list changes (`notifications/tools/list_changed`) has it fetched again;
`changes` counts such changes, so the prompt's listing is rebuilt once per change, not per request.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nanohermes.mcp.asking import CANNOT_ASK, DECLINE, Asker, Question, Reply, declined_note
from nanohermes.mcp.connection import (
    FAILED,
    NOT_STARTED,
    PROGRESS_CAP_FACTOR,
    RUNNING,
    STARTING,
    CallOutcome,
    Connection,
    Hooks,
    McpCallTimeout,
    McpUnavailable,
)
from nanohermes.mcp.lists import list_prompts, pages
from nanohermes.mcp.oauth import LOGIN_TIMEOUT_S, client_auth
from nanohermes.mcp.sampling import (
    DECLINED,
    INTERNAL_ERROR,
    NO_MODEL,
    USER_REJECTED,
    Outcome,
    Sampler,
    answer,
    request_for,
)
from nanohermes.mcp.settings import McpServerSettings
from nanohermes.mcp.toolcache import McpPromptInfo, McpToolInfo, ToolCache
from nanohermes.sandbox.policy import Policy

__all__ = ["FAILED", "NOT_STARTED", "RUNNING", "STARTING", "CallOutcome", "McpCallTimeout", "McpHub", "McpUnavailable"]

RETRY_AFTER_FAILURE_S = 30.0  # a server that just failed to start fails the same way when asked again at once
# (one that ran and then stopped, e.g. crashed on a call, is restarted at its next use)
WAIT_SLACK_S = 5.0  # the waiting side's margin over a deadline the loop enforces itself
CLOSE_TIMEOUT_S = 6.0  # the SDK gives a stdio server 2 s to exit on its own, then 2 s after TERM
PROGRESS_EVERY_S = 0.2  # progress shown at most this often (a server may report every millisecond)
_log = logging.getLogger("nanohermes.mcp")


@dataclass(frozen=True)
class ServerStatus:
    state: str  # NOT_STARTED | STARTING | RUNNING | FAILED
    detail: str = ""  # why it failed


class McpHub:
    """A session's MCP servers. Thread-safe for one caller at a time (the agent loop)."""

    def __init__(
        self, servers: tuple[McpServerSettings, ...], home: Path, workspace: Path, sandbox: Policy | None = None
    ):
        """`sandbox`: what confines the servers that opted in (None: the level is off)."""
        self.servers = {s.name: s for s in servers}
        self.sandbox = sandbox
        self.cache = ToolCache(home)
        self.workspace = workspace
        self.home = Path(home)
        self.log_dir = Path(home) / "mcp" / "logs"
        self.browser: Callable[[str], None] | None = None  # `mcp login`: opens an OAuth authorization URL
        self.ask_user: Asker | None = None  # the front end's "ask the user" (None: questions are declined)
        self.sample: Sampler | None = None  # the session's model for a server's sampling request (runtime.py)
        self.changes = 0  # tool lists changed by their servers since the start (the prompt's listing follows)
        self._conns: dict[str, Connection] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._inbox: queue.Queue = queue.Queue()  # what must run on the waiting thread; None: an answer is in
        self._report: Callable[[str], None] | None = None  # the running call's progress, shown
        self._reported_at = 0.0
        self._notes: list[str] = []  # the running call's questions that could not be asked

    # -- what is known without starting anything ---------------------------------------------

    def status(self, name: str) -> ServerStatus:
        conn = self._conns.get(name)
        if conn is None:
            return ServerStatus(NOT_STARTED)
        return ServerStatus(conn.state, conn.error if conn.state == FAILED else "")

    def live_tools(self, name: str) -> list[McpToolInfo] | None:
        """The running server's own list (None when it does not run: a cached list may be stale)."""
        conn = self._conns.get(name)
        return conn.tools if conn is not None and conn.state == RUNNING else None

    def known_tools(self, name: str) -> list[McpToolInfo] | None:
        """The live list when the server runs, else the one cached from its last start."""
        conn = self._conns.get(name)
        if conn is not None and conn.state == RUNNING:
            return conn.tools
        return self.cache.load(self.servers[name])

    def instructions(self, name: str) -> str:
        """The server's `instructions` (live, else as cached from its last start)."""
        conn = self._conns.get(name)
        if conn is not None and conn.state == RUNNING:
            return conn.instructions
        return self.cache.instructions(self.servers[name])

    # -- starting and calling ------------------------------------------------------------------

    def tools(self, name: str) -> list[McpToolInfo]:
        """The server's tools, starting it if needed; McpUnavailable when it cannot run."""
        return self._running(name).tools

    def call(self, name: str, tool: str, arguments: dict, report: Callable[[str], None] | None = None) -> CallOutcome:
        """Call one tool; McpUnavailable, McpCallTimeout, or the SDK's MCPError (a protocol error).
        `report` shows the call's progress (on this thread)."""
        conn = self._running(name)
        self._report, self._notes = report, []
        try:
            outcome = self._wait(conn.call(tool, arguments), conn.settings.timeout * PROGRESS_CAP_FACTOR)
        finally:
            self._report = None
        notes = tuple(self._notes)
        return CallOutcome(outcome.blocks, outcome.structured, outcome.is_error, notes) if notes else outcome

    def refresh_tools(self, name: str) -> list[McpToolInfo]:
        """The running server's list fetched again (a tool asked for that it lacks may be new)."""
        conn = self._running(name)
        self._wait(conn.relist(), conn.settings.timeout)
        return conn.tools

    def resources(self, name: str) -> list:
        """The server's resources (the SDK's Resource objects; [] when it offers none)."""
        conn = self._running(name)
        return self._wait(conn.request(pages(conn.client, "resources")), conn.settings.timeout)

    def resource_templates(self, name: str) -> list:
        """The server's resource templates (the SDK's ResourceTemplate objects: a `uri_template` to fill in)."""
        conn = self._running(name)
        return self._wait(conn.request(pages(conn.client, "templates")), conn.settings.timeout)

    def read_resource(self, name: str, uri: str) -> list:
        """One resource's contents (text or blob items)."""
        conn = self._running(name)
        return self._wait(conn.request(conn.client.read_resource(uri)), conn.settings.timeout).contents

    def prompts(self, name: str) -> list[McpPromptInfo]:
        """The server's prompts, listed again ([] when it offers none); kept for the next sessions."""
        conn = self._running(name)
        conn.prompts = self._wait(conn.request(list_prompts(conn.client)), conn.settings.timeout)
        self.cache.save(conn.settings, conn.tools, conn.instructions, conn.prompts)
        return conn.prompts

    def known_prompts(self, name: str) -> list[McpPromptInfo] | None:
        """The running server's prompts, else those kept from its last start (None: never listed)."""
        conn = self._conns.get(name)
        if conn is not None and conn.state == RUNNING:
            return conn.prompts
        return self.cache.prompts(self.servers[name])

    def protocol_version(self, name: str) -> str:
        """The protocol the running server speaks ("" when it does not run)."""
        conn = self._conns.get(name)
        return conn.protocol_version if conn is not None and conn.state == RUNNING else ""

    def get_prompt(self, name: str, prompt: str, arguments: dict[str, str]):
        """A prompt's messages (the SDK's GetPromptResult)."""
        conn = self._running(name)
        return self._wait(conn.request(conn.client.get_prompt(prompt, arguments)), conn.settings.timeout)

    def _running(self, name: str) -> Connection:
        conn = self._conns.get(name)
        if conn is not None and conn.state == RUNNING:
            return conn
        if (
            conn is not None
            and conn.state == FAILED
            and not conn.retry_at_once
            and time.monotonic() - conn.failed_at < RETRY_AFTER_FAILURE_S
        ):
            raise McpUnavailable(conn.error)
        settings = self.servers[name]
        self._start_loop()
        self.log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        hooks = Hooks(ask=self._ask, progress=self._progress, changed=self._changed, sample=self._sample)
        auth = client_auth(settings, self.home, self.browser) if settings.oauth else None
        conn = Connection(settings, self.workspace, self.log_dir / f"{name}.log", hooks, self.sandbox, auth)
        self._conns[name] = conn
        limit = settings.startup_timeout + (LOGIN_TIMEOUT_S if self.browser and settings.oauth else 0)
        tools = self._wait(conn.start(limit), limit)
        self.cache.save(settings, tools, conn.instructions, conn.prompts)
        return conn

    def _wait(self, coroutine, deadline: float):
        """Run a coroutine on the loop and wait for it (the loop enforces `deadline` itself),
        running what the loop hands this thread meanwhile (time spent asking the user is not
        counted)."""
        while not self._inbox.empty():  # what a call given up left behind (a question: cancelled)
            left = self._inbox.get_nowait()
            getattr(left, "cancel", lambda: None)()
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        future.add_done_callback(lambda _: self._inbox.put(None))
        ends = time.monotonic() + deadline + WAIT_SLACK_S
        try:
            while True:
                try:
                    job = self._inbox.get(timeout=max(0.0, ends - time.monotonic()))
                except queue.Empty:
                    raise McpCallTimeout(f"no answer within {deadline:g} s") from None
                if job is None:
                    if future.done():
                        return future.result()
                    continue
                started = time.monotonic()
                job()
                ends += time.monotonic() - started
        finally:  # Ctrl-C (KeyboardInterrupt) or a timeout: do not leave the call running
            if not future.done():
                future.cancel()

    # -- the connections' hooks (called on the loop) ------------------------------------------

    async def _ask(self, question: Question) -> Reply:
        """A server's question, put to the user on the waiting thread (the loop waits for it)."""
        asker = self.ask_user
        if asker is None:
            self._notes.append(declined_note(question, CANNOT_ASK))
            return Reply(DECLINE)
        reply = await self._on_waiting_thread(lambda: asker(question), Reply("cancel"))
        if reply.note:  # the front end could not put it to the user, and says why
            self._notes.append(declined_note(question, reply.note))
        return reply

    async def _sample(self, server: str, params) -> Outcome:
        """A server's sampling request: the user asked, then the session's model (tools off)."""
        request = request_for(server, params)
        asker, sample = self.ask_user, self.sample
        if asker is None:
            self._notes.append(declined_note(request.question, CANNOT_ASK))
            return Outcome(error=f"declined: {CANNOT_ASK}", code=USER_REJECTED)
        if sample is None:
            return Outcome(error=NO_MODEL, code=INTERNAL_ERROR)
        cancelled = Outcome(error=DECLINED, code=USER_REJECTED)
        return await self._on_waiting_thread(lambda: answer(request, asker, sample), cancelled)

    async def _on_waiting_thread(self, work: Callable[[], object], cancelled: object):
        """`work()` run on the waiting thread (where the user can be asked); `cancelled` when the
        call is given up first or Ctrl-C ends it."""
        loop = asyncio.get_running_loop()
        result = loop.create_future()

        def settle(value) -> None:
            loop.call_soon_threadsafe(lambda: result.done() or result.set_result(value))

        def job():
            try:
                value = work()
            except BaseException as exc:  # Ctrl-C while asking: the call is cancelled by _wait
                settle(cancelled)
                raise exc
            settle(value)

        job.cancel = lambda: settle(cancelled)
        self._inbox.put(job)
        return await result

    def _progress(self, text: str) -> None:
        report = self._report
        now = time.monotonic()
        if report is not None and now - self._reported_at >= PROGRESS_EVERY_S:
            self._reported_at = now
            self._inbox.put(lambda: report(text))

    def _changed(self, conn: Connection) -> None:
        self.cache.save(conn.settings, conn.tools, conn.instructions, conn.prompts)
        self.changes += 1

    # -- the loop ------------------------------------------------------------------------------

    def _start_loop(self) -> None:
        if self._loop is not None:
            return
        logging.getLogger("mcp").addHandler(logging.NullHandler())  # the SDK's logs must not reach the terminal
        logging.getLogger("mcp").propagate = False
        self._loop = asyncio.new_event_loop()
        # A server's failures are its state and the tool errors; what asyncio would report of
        # them (a task's exception nobody awaited) must not reach the terminal as a traceback.
        self._loop.set_exception_handler(lambda loop, context: _log.debug("mcp loop: %s", context.get("message")))
        self._thread = threading.Thread(target=self._loop.run_forever, name="nanohermes-mcp", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop every server (stdio processes end; HTTP sessions are closed) and the loop."""
        if self._loop is None:
            return

        async def stop_all():
            for conn in self._conns.values():
                conn.stop.set()
            tasks = [c.task for c in self._conns.values() if c.task is not None]
            if tasks:
                await asyncio.wait(tasks, timeout=CLOSE_TIMEOUT_S)

        try:
            asyncio.run_coroutine_threadsafe(stop_all(), self._loop).result(timeout=CLOSE_TIMEOUT_S + WAIT_SLACK_S)
        except (concurrent.futures.TimeoutError, RuntimeError):
            pass  # a server that ignores TERM and KILL cannot keep the session from ending
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=WAIT_SLACK_S)
        self._loop, self._conns = None, {}
