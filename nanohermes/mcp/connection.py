"""One server's connection, driven by a task on the hub's loop: it enters the SDK's client (a
client must be left by the task that entered it), lists the tools, and holds the connection
open until the hub stops it.

What the client offers the server (declared in its capabilities): its roots (the workspace),
form questions for the user (elicitation: asked through the hub's `ask` hook, which a front end
answers), sampling (the session's model, once the user said yes: the hub's `sample` hook), and
`notifications/tools/list_changed` honoured (the list fetched again; the hub updates the
prompt's listing). A call asks for progress: each notification is shown (the hub's
`progress` hook) and moves the call's deadline on, within PROGRESS_CAP_FACTOR times its timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

from nanohermes.fileio import create_regular
from nanohermes.mcp.asking import Question, Reply, question_from, roots_for
from nanohermes.mcp.listing import one_line
from nanohermes.mcp.lists import list_prompts, list_tools
from nanohermes.mcp.sampling import Outcome
from nanohermes.mcp.settings import McpServerSettings
from nanohermes.mcp.toolcache import McpPromptInfo, McpToolInfo
from nanohermes.mcp.transport import (
    CONNECTION_CLOSED,
    LOG_DRAIN_S,
    CappedLog,
    describe_failure,
    open_client,
    stderr_tail,
)
from nanohermes.sandbox.policy import Policy

NOT_STARTED, STARTING, RUNNING, FAILED = "not started", "starting", "running", "failed"
# A call that reports progress is alive: each report gives it its timeout again, but never more
# than this many timeouts in all (a server that reports forever must not hold the turn forever).
PROGRESS_CAP_FACTOR = 5
TICK_S = 0.25  # how often a waiting call looks at its deadline (progress and questions move it)
PROGRESS_CHARS = 120  # a server's progress message, as shown
RELIST_WAIT_S = 2.0  # how long a call's answer waits for the tool list its server said changed meanwhile
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
    notes: tuple[str, ...] = ()  # what happened on the client's side during the call (a question declined)


@dataclass
class Hooks:
    """What a connection tells its hub (all called on the hub's loop)."""

    ask: Callable[[Question], Awaitable[Reply]]  # a form for the user
    progress: Callable[[str], None]  # a running call's progress, in words
    changed: Callable[[Connection], None]  # the server's tool list changed
    sample: Callable[[str, object], Awaitable[Outcome]]  # a sampling request (server, params), answered


class Deadline:
    """A call's deadline: `seconds` from now, moved on by progress up to the cap, stopped while
    the user is being asked (a person's time is not the server's)."""

    def __init__(self, seconds: float, cap_factor: float = PROGRESS_CAP_FACTOR):
        now = time.monotonic()
        self.seconds, self.cap_factor = seconds, cap_factor
        self.expires, self.cap = now + seconds, now + seconds * cap_factor
        self.paused_at: float | None = None
        self.extended = False

    def extend(self) -> None:
        self.expires = min(max(self.expires, time.monotonic() + self.seconds), self.cap)
        self.extended = True

    def missed(self) -> str:
        """Why the call was given up, in words."""
        if self.extended and self.expires >= self.cap:
            most = self.seconds * self.cap_factor
            return f"no answer within {most:g} s, the most a call that reports progress may take (it was cancelled)"
        if self.extended:
            return f"no answer and no progress for {self.seconds:g} s (the call was cancelled)"
        return f"no answer within {self.seconds:g} s (the call was cancelled)"

    def pause(self) -> None:
        self.paused_at = time.monotonic()

    def resume(self) -> None:
        if self.paused_at is not None:
            shift = time.monotonic() - self.paused_at
            self.expires, self.cap, self.paused_at = self.expires + shift, self.cap + shift, None

    def remaining(self) -> float:
        return math.inf if self.paused_at is not None else self.expires - time.monotonic()


class Connection:
    def __init__(
        self,
        settings: McpServerSettings,
        workspace: Path,
        log_path: Path,
        hooks: Hooks,
        sandbox: Policy | None = None,
        auth=None,
    ):
        """`auth`: an httpx2 Auth for an HTTP server (OAuth)."""
        self.auth = auth
        self.settings, self.workspace, self.log_path, self.sandbox, self.hooks = (
            settings,
            workspace,
            log_path,
            sandbox,
            hooks,
        )
        self.state, self.error, self.failed_at = STARTING, "", 0.0
        self.retry_at_once = False  # it ran and stopped, or its start was interrupted: the next use starts it again
        self.client = None
        self.tools: list[McpToolInfo] = []
        self.prompts: list[McpPromptInfo] = []  # as listed at the start (hub.prompts lists them again)
        self.instructions = ""
        self.protocol_version = ""  # as negotiated
        self.http_errors: list[int] = []  # an HTTP server's error statuses, for the failure's words
        self.deadline: Deadline | None = None  # the running call's
        self.stop = asyncio.Event()
        self.ended = asyncio.Event()
        self.task: asyncio.Task | None = None
        self._relisting: asyncio.Task | None = None

    async def start(self, limit: float) -> list[McpToolInfo]:
        """Start it and list its tools within `limit` seconds (its startup_timeout, or more for a login)."""
        ready = asyncio.get_running_loop().create_future()
        # Retrieved even when nobody waits any more (a timeout, Ctrl-C): else asyncio logs
        # "Future exception was never retrieved", with a traceback, on the user's terminal.
        ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.task = asyncio.create_task(self._serve(ready))
        try:
            return await asyncio.wait_for(asyncio.shield(ready), limit)
        except TimeoutError:
            self.task.cancel()
            self._fail(f"it did not start and list its tools within {limit:g} s")
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
                    callbacks = {
                        "list_roots_callback": self._roots,
                        "elicitation_callback": self._elicit,
                        "sampling_callback": self._sample,
                        "message_handler": self._message,
                    }
                    self.client = await open_client(
                        stack,
                        self.settings,
                        self.workspace,
                        log.writer,
                        self.sandbox,
                        callbacks,
                        self.http_errors,
                        self.auth,
                    )
                    self.instructions = self.client.instructions or ""
                    self.protocol_version = str(self.client.protocol_version)
                    self.tools = await list_tools(self.client)
                    self.prompts = await list_prompts(self.client)
                    self.state, self.retry_at_once = RUNNING, True
                    ready.set_result(self.tools)
                    listening = asyncio.create_task(self._listen())
                    try:
                        await self.stop.wait()
                    finally:
                        listening.cancel()
            finally:
                log.close()
        except BaseException as exc:  # cancelled, or any failure (groups too): the server's state, never a crash
            if self.state != FAILED:
                status = self.http_errors[-1] if self.http_errors else None
                self._fail(describe_failure(exc, self.settings, status))
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

    # -- what the server may ask of the client ---------------------------------------------------

    async def _roots(self, context):
        import mcp_types as types

        return types.ListRootsResult(roots=[types.Root(uri=u, name=n) for u, n in roots_for(self.workspace)])

    async def _elicit(self, context, params):
        import mcp_types as types

        schema = getattr(params, "requested_schema", None)
        question = question_from(self.settings.name, params.message, schema, getattr(params, "url", "") or "")
        deadline = self.deadline
        if deadline is not None:
            deadline.pause()
        try:
            reply = await self.hooks.ask(question)
        finally:
            if deadline is not None:
                deadline.resume()
        return types.ElicitResult(action=reply.action, content=reply.content if reply.action == "accept" else None)

    async def _sample(self, context, params):
        import mcp_types as types

        deadline = self.deadline
        if deadline is not None:  # the user's time and the model's are not the server's
            deadline.pause()
        try:
            outcome = await self.hooks.sample(self.settings.name, params)
        finally:
            if deadline is not None:
                deadline.resume()
        if outcome.error:
            return types.ErrorData(code=outcome.code, message=outcome.error)
        content = types.TextContent(type="text", text=outcome.text)
        return types.CreateMessageResult(
            role="assistant", content=content, model=outcome.model, stop_reason=outcome.stop_reason
        )

    async def _message(self, message) -> None:
        """Notifications (and transport errors) from the server: a changed tool list is fetched again."""
        import mcp_types as types

        if isinstance(message, types.ToolListChangedNotification):
            self._relist_soon()

    async def _listen(self) -> None:
        """On a 2026-07-28 connection, changes come on a `subscriptions/listen` stream."""
        client = self.client
        caps = getattr(client.server_capabilities, "tools", None)
        if not (caps and caps.list_changed) or not str(client.protocol_version).startswith("2026"):
            return
        try:
            async with client.listen(tools_list_changed=True) as events:
                async for _ in events:
                    self._relist_soon()
        except Exception as exc:  # a server that does not keep the stream: its notifications still count
            _log.debug("mcp %s: no change stream: %s", self.settings.name, exc)

    def _relist_soon(self) -> None:
        # Not awaited here: the handler runs on the SDK's receive path, which the list's answer needs.
        if self._relisting is None or self._relisting.done():
            self._relisting = asyncio.create_task(self.relist())

    async def relist(self) -> None:
        """The tool list fetched again; the hub is told when it changed."""
        client = self.client
        if client is None:
            return
        try:
            tools = await asyncio.wait_for(list_tools(client, refresh=True), self.settings.timeout)
        except Exception as exc:  # the old list stays; a call of a tool it lacks says so
            _log.debug("mcp %s: tools not listed again: %s", self.settings.name, exc)
            return
        if tools != self.tools:
            self.tools = tools
            self.hooks.changed(self)

    # -- the client's requests -------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict) -> CallOutcome:
        client = self._client()
        from mcp import MCPError

        self.deadline = deadline = Deadline(self.settings.timeout)

        async def progress(done: float, total: float | None, message: str | None) -> None:
            deadline.extend()
            self.hooks.progress(progress_text(done, total, message))

        # The SDK gets no timeout of its own: the deadline here moves with progress and questions.
        call = asyncio.create_task(client.call_tool(tool, arguments, progress_callback=progress))
        try:
            await self._until_done(call, deadline)
            result = call.result()
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self.stop.set()
                with contextlib.suppress(TimeoutError):  # once it ended, its log holds its last words
                    await asyncio.wait_for(self.ended.wait(), 2 * LOG_DRAIN_S)
                self._fail("it closed the connection")
                raise McpUnavailable(self.error) from None
            raise
        finally:
            self.deadline = None
        relisting = self._relisting  # a change the call announced: in the listing of the very next request
        if relisting is not None and not relisting.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(relisting), RELIST_WAIT_S)
        return CallOutcome(list(result.content or []), result.structured_content, bool(result.is_error))

    async def request(self, coroutine):
        """Another request (resources, prompts) under the call timeout."""
        self._client()
        task = asyncio.ensure_future(coroutine)
        await self._until_done(task, Deadline(self.settings.timeout, 1))
        return task.result()

    def _client(self):
        if self.client is None or self.state != RUNNING:
            raise McpUnavailable(self.error or "it is not running")
        return self.client

    async def _until_done(self, task: asyncio.Future, deadline: Deadline) -> None:
        """Wait for `task`; McpUnavailable when the server stops first, McpCallTimeout past the deadline."""
        ended = asyncio.create_task(self.ended.wait())
        try:
            while not task.done():
                remaining = deadline.remaining()
                if remaining <= 0:
                    task.cancel()
                    raise McpCallTimeout(deadline.missed())
                await asyncio.wait({task, ended}, timeout=min(remaining, TICK_S), return_when=asyncio.FIRST_COMPLETED)
                if ended.done() and not task.done():
                    task.cancel()
                    raise McpUnavailable(f"it stopped during the call: {self.error}")
        finally:
            ended.cancel()


def progress_text(done: float, total: float | None, message: str | None) -> str:
    """`3/10 · indexing files` (the message is the server's: one line, cut)."""
    amount = f"{done:g}/{total:g}" if total else f"{done:g}"
    words = one_line(message or "", PROGRESS_CHARS)
    return f"{amount} · {words}" if words else amount
