"""The connections to a session's MCP servers, on the `mcp` SDK's asyncio client.

The agent loop is synchronous; the SDK is not. So the hub owns one background thread running
an asyncio loop, started on first use, and each server one task on it that enters the SDK's
client (starting the process or opening the HTTP session), lists the tools, and holds the
connection open until the hub closes (a client must be left by the task that entered it).
The loop's thread asks for a tool list or a call and waits for the answer with a deadline.

Nothing hangs: a server has `startup_timeout` seconds to start and list its tools and
`timeout` seconds per call; one that died or never started is a clear McpUnavailable (its
last stderr lines, from its log file, say why), retried at the next use but not more often
than every RETRY_AFTER_FAILURE_S. Ctrl-C while waiting cancels the call on the loop too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

from nanohermes.fileio import create_regular
from nanohermes.mcp.settings import McpServerSettings
from nanohermes.mcp.toolcache import McpToolInfo, ToolCache
from nanohermes.mcp.transport import (
    CONNECTION_CLOSED,
    LOG_DRAIN_S,
    CappedLog,
    describe_failure,
    open_client,
    stderr_tail,
)
from nanohermes.sandbox.policy import Policy

RETRY_AFTER_FAILURE_S = 30.0  # a server that just failed to start fails the same way when asked again at once
# (one that ran and then stopped, e.g. crashed on a call, is restarted at its next use)
WAIT_SLACK_S = 5.0  # the waiting side's margin over a deadline the loop enforces itself
CLOSE_TIMEOUT_S = 6.0  # the SDK gives a stdio server 2 s to exit on its own, then 2 s after TERM

NOT_STARTED, STARTING, RUNNING, FAILED = "not started", "starting", "running", "failed"
_log = logging.getLogger("nanohermes.mcp")


class McpUnavailable(Exception):
    """The server is not running and could not be started; the message says why."""


class McpCallTimeout(Exception):
    """The server did not answer a call in time (the call was cancelled)."""


@dataclass(frozen=True)
class CallOutcome:
    blocks: list  # the SDK's content blocks (text, image, resource, …)
    structured: object | None  # structuredContent, when the tool returned it
    is_error: bool


@dataclass(frozen=True)
class ServerStatus:
    state: str  # NOT_STARTED | STARTING | RUNNING | FAILED
    detail: str = ""  # why it failed


class _Connection:
    """One server's connection, driven by a task on the hub's loop."""

    def __init__(self, settings: McpServerSettings, workspace: Path, log_path: Path, sandbox: Policy | None = None):
        self.settings, self.workspace, self.log_path, self.sandbox = settings, workspace, log_path, sandbox
        self.state, self.error, self.failed_at = STARTING, "", 0.0
        self.retry_at_once = False  # it ran and stopped, or its start was interrupted: the next use starts it again
        self.client = None
        self.tools: list[McpToolInfo] = []
        self.stop = asyncio.Event()
        self.ended = asyncio.Event()
        self.task: asyncio.Task | None = None

    async def start(self) -> list[McpToolInfo]:
        ready = asyncio.get_running_loop().create_future()
        # Retrieved even when nobody waits any more (a timeout, Ctrl-C): else asyncio logs
        # "Future exception was never retrieved", with a traceback, on the user's terminal.
        ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.task = asyncio.create_task(self._serve(ready))
        try:
            return await asyncio.wait_for(asyncio.shield(ready), self.settings.startup_timeout)
        except TimeoutError:
            self.task.cancel()
            self._fail(f"it did not start and list its tools within {self.settings.startup_timeout:g} s")
            raise McpUnavailable(self.error) from None
        except asyncio.CancelledError:  # Ctrl-C while it started: stop it; the next use tries again
            self.retry_at_once = True
            self.task.cancel()
            raise

    async def _serve(self, ready: asyncio.Future) -> None:
        try:
            log = CappedLog(create_regular(self.log_path))
            try:
                async with AsyncExitStack() as stack:
                    self.client = await open_client(stack, self.settings, self.workspace, log.writer, self.sandbox)
                    self.tools = await _list_tools(self.client)
                    self.state, self.retry_at_once = RUNNING, True
                    ready.set_result(self.tools)
                    await self.stop.wait()
            finally:
                log.close()
        except BaseException as exc:  # cancelled, or any failure (groups too): the server's state, never a crash
            if self.state != FAILED:
                self._fail(describe_failure(exc, self.settings))
        finally:
            self.client = None
            if not ready.done():
                ready.set_exception(McpUnavailable(self.error or "it stopped before listing its tools"))
            if self.state == RUNNING:
                self._fail("it stopped")
            self.ended.set()

    def _fail(self, reason: str) -> None:
        tail = stderr_tail(self.log_path)
        self.state, self.failed_at = FAILED, time.monotonic()
        self.error = f"{reason}{f'; its stderr ended with: {tail}' if tail else ''}"

    async def call(self, tool: str, arguments: dict) -> CallOutcome:
        client = self.client
        if client is None or self.state != RUNNING:
            raise McpUnavailable(self.error or "it is not running")
        from mcp import MCPError

        timeout = self.settings.timeout
        call = asyncio.create_task(client.call_tool(tool, arguments, read_timeout_seconds=timeout))
        ended = asyncio.create_task(self.ended.wait())
        done, _ = await asyncio.wait({call, ended}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        ended.cancel()
        if call not in done:
            call.cancel()
            if ended in done:
                raise McpUnavailable(f"it stopped during the call: {self.error}")
            raise McpCallTimeout(f"no answer within {timeout:g} s (the call was cancelled)")
        try:
            result = call.result()
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self.stop.set()
                with contextlib.suppress(TimeoutError):  # once it ended, its log holds its last words
                    await asyncio.wait_for(self.ended.wait(), 2 * LOG_DRAIN_S)
                self._fail("it closed the connection")
                raise McpUnavailable(self.error) from None
            raise
        return CallOutcome(list(result.content or []), result.structured_content, bool(result.is_error))


async def _list_tools(client) -> list[McpToolInfo]:
    """Every page of the server's tool list (bounded: a cursor that never ends is a bug)."""
    tools, cursor = [], None
    for _ in range(50):
        page = await client.list_tools(cursor=cursor)
        tools += [
            McpToolInfo(t.name, t.description or "", dict(t.input_schema or {}), _read_only(t)) for t in page.tools
        ]
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _read_only(tool) -> bool:
    """The tool's readOnlyHint (mcp 2.x names it read_only_hint), only when exactly true."""
    annotations = getattr(tool, "annotations", None)
    return getattr(annotations, "read_only_hint", getattr(annotations, "readOnlyHint", None)) is True


class McpHub:
    """A session's MCP servers: the agent loop calls them, its read-only calls side by side."""

    def __init__(
        self, servers: tuple[McpServerSettings, ...], home: Path, workspace: Path, sandbox: Policy | None = None
    ):
        """`sandbox`: what confines the servers that opted in (None: the level is off)."""
        self.servers = {s.name: s for s in servers}
        self.sandbox = sandbox
        self.cache = ToolCache(home)
        self.workspace = workspace
        self.log_dir = Path(home) / "mcp" / "logs"
        self._conns: dict[str, _Connection] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._starting = threading.Lock()

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

    # -- starting and calling ------------------------------------------------------------------

    def tools(self, name: str) -> list[McpToolInfo]:
        """The server's tools, starting it if needed; McpUnavailable when it cannot run."""
        return self._running(name).tools

    def call(self, name: str, tool: str, arguments: dict) -> CallOutcome:
        """Call one tool; McpUnavailable, McpCallTimeout, or the SDK's MCPError (a protocol error)."""
        conn = self._running(name)
        return self._wait(conn.call(tool, arguments), conn.settings.timeout)

    def _running(self, name: str) -> _Connection:
        with self._starting:  # read-only calls run side by side (loop/execute.py): one start per server
            return self._running_locked(name)

    def _running_locked(self, name: str) -> _Connection:
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
        conn = self._conns[name] = _Connection(settings, self.workspace, self.log_dir / f"{name}.log", self.sandbox)
        tools = self._wait(conn.start(), settings.startup_timeout)
        self.cache.save(settings, tools)
        return conn

    def _wait(self, coroutine, deadline: float):
        """Run a coroutine on the loop and wait for it (the loop enforces `deadline` itself)."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result(timeout=deadline + WAIT_SLACK_S)
        except concurrent.futures.TimeoutError:
            raise McpCallTimeout(f"no answer within {deadline:g} s") from None
        finally:  # Ctrl-C (KeyboardInterrupt) or a timeout: do not leave the call running
            if not future.done():
                future.cancel()

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
