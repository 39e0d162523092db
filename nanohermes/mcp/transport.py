"""How the hub reaches one server with the SDK's client (stdio or streamable HTTP), and how a
failure to reach it is put in one line.

A stdio server gets the SDK's minimal environment (PATH, HOME, USER, …: never our API key)
plus its `env`, the workspace as its working directory unless `cwd` says otherwise, and a log
file for its stderr, so nothing it prints reaches the terminal (or, under `nanohermes acp`,
the protocol).
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from contextlib import AsyncExitStack
from pathlib import Path
from typing import BinaryIO, TextIO

from nanohermes.errors import SandboxUnavailable
from nanohermes.fileio import open_regular
from nanohermes.mcp.settings import AUTO, HANDSHAKE_VERSION, MODERN_VERSION, VARIABLE, McpServerSettings
from nanohermes.sandbox.actors import USER, command_policy
from nanohermes.sandbox.launch import confine, unconfined
from nanohermes.sandbox.policy import Policy

STDERR_TAIL_LINES = 3  # the last lines of a failing server's stderr usually say why
STDERR_TAIL_CHARS = 400
MAX_LOG_BYTES = 1_048_576  # a server's stderr log: its start-up and last words; a chatty one starts over
LOG_STARTED_OVER = b"[NanoHermes: this log started over: it keeps at most the last 1 MB a server wrote]\n"
LOG_READ_BYTES = 65_536
LOG_DRAIN_S = 1.0  # what an exited server wrote last is in the pipe already: it is read at once


class CappedLog:
    """Where a stdio server's stderr goes: a pipe drained by a thread into its log file, which
    starts over (saying so) past MAX_LOG_BYTES, so its last lines, which say why it stopped,
    are always there and a server that writes without end fills no disk. `writer` is what the
    SDK hands the server as its stderr; close() when the connection ends (the thread ends when
    the server's copy closes too)."""

    def __init__(self, log: BinaryIO):
        read_fd, write_fd = os.pipe()  # neither end is inherited by other children (PEP 446)
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._thread = threading.Thread(target=self._drain, args=(read_fd, log), name="nanohermes-mcp-log", daemon=True)
        self._thread.start()

    @staticmethod
    def _drain(read_fd: int, log: BinaryIO) -> None:
        written = 0
        with os.fdopen(read_fd, "rb", buffering=0) as pipe, log:
            while chunk := pipe.read(LOG_READ_BYTES):
                if written + len(chunk) > MAX_LOG_BYTES:
                    log.seek(0)
                    log.truncate()
                    written = log.write(LOG_STARTED_OVER)
                written += log.write(chunk)
                log.flush()

    def close(self) -> None:
        """Our end closed; the last lines of a server that has exited reach the file before its
        failure is worded from them (stderr_tail)."""
        self.writer.close()
        self._thread.join(LOG_DRAIN_S)


CONNECTION_CLOSED = -32000  # the SDK's MCPError code when the server went away mid-request
FAILURE_CHARS = 300  # an exception's own text, in a failure's one line
HTTP_CONNECT_TIMEOUT_S = 30.0
HTTP_READ_TIMEOUT_S = 300.0  # a streamable HTTP server may hold a response stream open; calls have their own deadline


class McpSetupError(Exception):
    """The server's settings cannot be used as they are (an unset variable)."""


def expand(text: str, where: str) -> str:
    """`${VAR}` replaced from the environment; an unset one is an McpSetupError naming it."""

    def value(match: re.Match) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise McpSetupError(f"${{{name}}} in its {where} is not set in the environment")
        return os.environ[name]

    return VARIABLE.sub(value, text)


# settings.protocol_version → the SDK Client's `mode`: "legacy" is the initialize handshake (the
# SDK offers its newest handshake revision, HANDSHAKE_VERSION); a modern version string is adopted
# without a probe; "auto" probes server/discover and falls back to the handshake.
SDK_MODES = {HANDSHAKE_VERSION: "legacy", MODERN_VERSION: MODERN_VERSION, AUTO: "auto"}


async def open_client(
    stack: AsyncExitStack,
    settings: McpServerSettings,
    workspace: Path,
    log: TextIO,
    sandbox: Policy | None = None,
    callbacks: dict | None = None,
    http_errors: list[int] | None = None,
    auth=None,
):
    """The SDK's Client, entered on `stack` (connected, the handshake done); a stdio server that
    opted in (`sandbox = true`) runs inside `sandbox` (None: the level is off). `callbacks`: the
    Client's (roots, elicitation, messages); `http_errors` gets each HTTP error status an HTTP
    server answered (the SDK reports them all as "Server returned an error response"); `auth`:
    an httpx2 Auth for an HTTP server (OAuth, oauth.py).

    The protocol: the server's pin, else the handshake (settings.py says why); a server that
    answers the handshake with an error (a 2026-07-28-only server) is connected again, "auto"."""
    pinned = settings.protocol_version
    attempt = AsyncExitStack()
    try:
        client = await _connect(attempt, settings, workspace, log, sandbox, callbacks, http_errors, auth, pinned)
    except BaseException as exc:
        await attempt.aclose()
        if pinned or not handshake_refused(exc):
            raise
        attempt = AsyncExitStack()
        try:
            client = await _connect(attempt, settings, workspace, log, sandbox, callbacks, http_errors, auth, AUTO)
        except BaseException:
            await attempt.aclose()
            raise
    stack.push_async_callback(attempt.aclose)
    return client


def handshake_refused(exc: BaseException) -> bool:
    """The server answered `initialize` with an error: it may speak the newer protocol only (a
    server that could not be reached, or went away, gave no such answer)."""
    cause = _first_cause(exc)
    return type(cause).__name__ == "MCPError" and getattr(cause, "code", None) != CONNECTION_CLOSED


async def _connect(
    stack: AsyncExitStack,
    settings: McpServerSettings,
    workspace: Path,
    log: TextIO,
    sandbox: Policy | None,
    callbacks: dict | None,
    http_errors: list[int] | None,
    auth,
    version: str | None,
):
    """One connection attempt in the SDK's mode for `version` (None: the handshake)."""
    from mcp import Client, Implementation, StdioServerParameters

    from nanohermes import __version__

    if settings.url:
        import httpx2  # the SDK's own HTTP client
        from mcp.client.streamable_http import streamable_http_client

        headers = {k: expand(v, "headers") for k, v in settings.headers}
        timeout = httpx2.Timeout(HTTP_CONNECT_TIMEOUT_S, read=HTTP_READ_TIMEOUT_S)

        async def note_status(response) -> None:
            if response.status_code >= 400 and http_errors is not None:
                http_errors.append(response.status_code)

        hooks = {"response": [note_status]}
        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=headers, timeout=timeout, event_hooks=hooks, auth=auth)
        )
        transport = streamable_http_client(expand(settings.url, "url"), http_client=http)
    else:
        from mcp.client.stdio import stdio_client

        argv = [expand(settings.command or "", "command"), *(expand(a, "args") for a in settings.args)]
        cwd = settings.cwd or str(workspace)
        if not os.path.isdir(cwd):  # else the start fails as FileNotFoundError, which reads as a missing command
            raise McpSetupError(f"its cwd {cwd!r} is not a directory (does it exist?)")
        policy = command_policy(USER, sandbox, sandbox=settings.sandbox)  # the user's server: as they chose
        launch = confine(argv, policy, cwd, fds=False) if policy is not None else unconfined(argv)  # the SDK starts it
        stack.callback(launch.release)  # after the SDK has ended the server's process group
        env = {k: expand(v, "env") for k, v in settings.env}
        params = StdioServerParameters(command=launch.argv[0], args=launch.argv[1:], env={**env, **launch.env}, cwd=cwd)
        transport = stdio_client(params, errlog=log)
    info = Implementation(name="nanohermes", version=__version__)
    client = Client(transport, client_info=info, mode=SDK_MODES[version or HANDSHAKE_VERSION], **(callbacks or {}))
    return await stack.enter_async_context(client)


def describe_failure(exc: BaseException, settings: McpServerSettings, http_status: int | None = None) -> str:
    """Why the server could not be reached or stopped, in a few words (`http_status`: the last
    HTTP error an HTTP server answered)."""
    cause = _first_cause(exc)
    if cause is None:
        return "it was stopped"
    if isinstance(cause, McpSetupError) or type(cause).__name__ == "LoginNeeded":
        return str(cause)
    if type(cause).__name__ in ("OAuthFlowError", "OAuthTokenError", "OAuthRegistrationError"):
        return f"its OAuth login failed: {_cut(str(cause))} (run `nanohermes mcp login {settings.name}`)"
    if isinstance(cause, SandboxUnavailable):  # fail closed: it asked to run confined
        return f"it was not started: {cause}"
    if isinstance(cause, FileNotFoundError) and not settings.url:
        return f"its command {settings.command!r} was not found (is it installed and on PATH?)"
    if isinstance(cause, PermissionError) and not settings.url:
        return f"its command {settings.command!r} cannot be run ({cause.strerror})"
    name = type(cause).__name__
    if name == "ConnectError":
        return f"could not connect to {settings.url}"
    response = getattr(cause, "response", None)
    status = getattr(response, "status_code", None) or (http_status if name == "MCPError" else None)
    if status:
        hint = " (check its headers: a token?)" if status in (401, 403) else ""
        return f"{settings.url} answered HTTP {status}{hint}"
    if name == "MCPError" and getattr(cause, "code", None) == CONNECTION_CLOSED:
        return "it exited or closed the connection before answering"
    if name == "MCPError":
        return f"it answered with an error: {_cut(str(cause))}"
    return f"{name}: {_cut(str(cause))}" if str(cause) else name


def _first_cause(exc: BaseException) -> BaseException | None:
    """The first exception in a (nested) group that is not a cancellation."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _first_cause(inner)
            if found is not None:
                return found
        return None
    return None if isinstance(exc, asyncio.CancelledError) else exc


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= FAILURE_CHARS else flat[: FAILURE_CHARS - 1] + "…"


def stderr_tail(path: Path) -> str:
    """The last few lines the server wrote to stderr, on one line ("" when none)."""
    try:
        with open_regular(path) as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 8192))
            lines = [line.strip() for line in f.read().decode("utf-8", "replace").splitlines() if line.strip()]
    except OSError:
        return ""
    tail = " | ".join(lines[-STDERR_TAIL_LINES:])
    return tail if len(tail) <= STDERR_TAIL_CHARS else "…" + tail[-STDERR_TAIL_CHARS:]
