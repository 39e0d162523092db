"""The Agent Client Protocol's agent side: what `nanohermes acp` answers an editor.

One process, many sessions: session/new and session/load build a runtime of their own
(config for that workspace, our saved session, its approvals and MCP servers), session/prompt
queues a turn on the main thread (acp/runner.py) and streams its events as updates,
session/cancel stops it as Ctrl-C would, session/set_mode (or the mode config option) switches
ask, plan and auto, the model config option switches the model, session/close releases a
session's runtime (its MCP servers and background tasks end; relay.py also caps how many stay
open). Every failure is a JSON-RPC error
carrying the one-paragraph message the CLI would print; a session that is not open answers the
protocol's "resource not found".
"""

from __future__ import annotations

import asyncio
import datetime
import re
from pathlib import Path

from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from nanohermes import __version__
from nanohermes import events as ev
from nanohermes.acp import updates
from nanohermes.acp.editor_files import EditorFiles
from nanohermes.acp.forms import offers_forms
from nanohermes.acp.session import COMMAND_DONE, AcpSession
from nanohermes.config import MODES
from nanohermes.crash import report_crash
from nanohermes.errors import NanoHermesError

INTERNAL_ERROR = -32603  # JSON-RPC: the request was fine, carrying it out failed
RESOURCE_NOT_FOUND = -32002  # the protocol's ErrorCode for a session (or saved session) that is not there
MAX_OPEN_SESSIONS = (
    8  # each holds a runtime and its MCP servers: past this the least recently used idle one is released
)
# The protocol has no reason for a spending cap: the nearest is a limit on the turn's requests.
STOP_REASONS = {
    None: "end_turn",
    ev.StopCode.INTERRUPTED: "cancelled",
    ev.StopCode.MAX_STEPS: "max_turn_requests",
    ev.StopCode.MAX_COST: "max_turn_requests",
}
LISTED_SESSIONS = 100  # the most recent ones; older ones load by name
_SERVER_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def failure(message: str) -> RequestError:
    return RequestError(INTERNAL_ERROR, message)


def not_found(message: str) -> RequestError:
    return RequestError(RESOURCE_NOT_FOUND, message)


class NanoHermesAgent:
    def __init__(self, runner, flags: dict):
        self.runner, self.flags = runner, flags  # flags: --model, --base-url, --mode of `nanohermes acp`
        self.sessions: dict[str, AcpSession] = {}
        self.conn = None
        self.client_capabilities = None
        self._served: dict[str, list[str] | None] = {}  # the models a server lists, by base URL (asked once)

    def on_connect(self, conn) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities=None, client_info=None, **kwargs):
        self.client_capabilities = client_capabilities
        capabilities = AgentCapabilities(
            load_session=True,
            prompt_capabilities=PromptCapabilities(embedded_context=True),
            mcp_capabilities=McpCapabilities(http=True),
            session_capabilities=SessionCapabilities(list=SessionListCapabilities(), close=SessionCloseCapabilities()),
        )
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=capabilities,
            auth_methods=[],
            agent_info=Implementation(name="nanohermes", title="NanoHermes", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs):
        return AuthenticateResponse()  # the model's key comes from config.toml or the environment

    async def new_session(self, cwd: str, mcp_servers=None, **kwargs):
        session = await self._open(cwd, None, mcp_servers or [])
        return NewSessionResponse(session_id=session.id, modes=session.modes(), config_options=session.options())

    async def load_session(self, cwd: str, session_id: str, mcp_servers=None, **kwargs):
        session = self.sessions.get(session_id)
        if session is None:
            from nanohermes.config import home_dir

            if not (home_dir() / "sessions" / f"{session_id}.jsonl").is_file():
                raise not_found(f"No saved session named {session_id!r}; `nanohermes sessions --all` lists them.")
            session = await self._open(cwd, session_id, mcp_servers or [])
        session.send_history()
        await session.flush()
        return LoadSessionResponse(modes=session.modes(), config_options=session.options())

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **kwargs):
        from nanohermes.config import home_dir
        from nanohermes.storage.catalog import in_workspace, list_sessions

        infos = [i for i in list_sessions(home_dir()) if i.parent is None]
        if cwd:
            infos = in_workspace(infos, Path(cwd).resolve())
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=i.name,
                    cwd=i.workspace or "",
                    title=i.title or None,
                    updated_at=datetime.datetime.fromtimestamp(i.last_used, datetime.UTC).isoformat(),
                )
                for i in infos[:LISTED_SESSIONS]
            ]
        )

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs):
        if mode_id not in MODES:
            raise RequestError.invalid_params({"message": f"unknown mode {mode_id!r}: use one of {', '.join(MODES)}"})
        self._session(session_id).set_mode(mode_id)
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value, **kwargs):
        session = self._session(session_id)
        if config_id == "mode":
            await self.set_session_mode(session_id, str(value))
        elif config_id == "model" and isinstance(value, str) and value.strip():
            session.set_model(value.strip())
        else:
            raise RequestError.invalid_params({"message": f"no option {config_id!r} takes {value!r}: mode or model"})
        return SetSessionConfigOptionResponse(config_options=session.options())

    async def close_session(self, session_id: str, **kwargs):
        """Stop its turn as session/cancel does, then release its runtime: MCP servers and background
        tasks end, the session is saved (session/load opens it again)."""
        await self._release(self._session(session_id))
        return CloseSessionResponse()

    async def _release(self, session: AcpSession) -> None:
        self.sessions.pop(session.id, None)
        job = session.job
        if job is not None and not job.cancel():
            self.runner.interrupt(session.id)
            try:
                await asyncio.wrap_future(job)
            except Exception:  # the turn's own failure: the session is going away
                pass
        await session.flush()
        await asyncio.to_thread(session.close)

    async def prompt(self, session_id: str, prompt: list, **kwargs):
        session = self._session(session_id)
        if session.job is not None and not session.job.done():
            raise failure("This session is still working on a prompt; cancel it or wait for its answer.")
        job = session.job = self.runner.submit(session_id, lambda: session.run_prompt(updates.prompt_text(prompt)))
        if self.runner.busy_with_other(session_id):
            session.outbox.put_nowait(("update", updates.thought("waiting for another session's turn to end…\n")))
        try:
            result = await asyncio.wrap_future(job)  # None: stopped before a result (cancelled)
        except asyncio.CancelledError:
            if not job.cancelled():
                raise  # this request itself was cancelled (the connection is closing)
            result = None
        except NanoHermesError as exc:
            await session.flush()
            raise failure(str(exc)) from None
        except (
            Exception
        ) as exc:  # a bug reaches the editor as the CLI's paragraph (traceback in a log), never kills the process
            await session.flush()
            raise failure(report_crash(exc)) from None
        await session.flush()
        return PromptResponse(stop_reason=self._stop_reason(session, result))

    def _stop_reason(self, session: AcpSession, result: ev.TurnResult | str | None) -> str:
        if result is None:
            return "cancelled"
        if result == COMMAND_DONE:
            return "end_turn"
        if result.stop_code in (
            ev.StopCode.REPEATING,
            ev.StopCode.CUT_CALLS,
            ev.StopCode.CHECK_FAILING,
            ev.StopCode.MAX_COST,
            ev.StopCode.HOOK_STOPPED,
        ):
            from nanohermes.stops import stop_message

            session.outbox.put_nowait(("update", updates.text_delta(f"\n\n{stop_message(result)}")))
        return STOP_REASONS.get(result.stop_code, "end_turn")

    async def cancel(self, session_id: str, **kwargs) -> None:
        session = self.sessions.get(session_id)
        if session is None or session.job is None:
            return
        if not session.job.cancel():  # already running: stop it as Ctrl-C does
            self.runner.interrupt(session_id)

    async def ext_method(self, method: str, params: dict) -> dict:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict) -> None:
        return None

    # -- sessions ----------------------------------------------------------------------------

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise not_found(f"No open session {session_id!r}: create one (session/new) or load it (session/load).")
        return session

    async def _open(self, cwd: str, name: str | None, mcp_servers: list) -> AcpSession:
        if not Path(cwd).is_dir():
            raise failure(
                f"The session's folder {cwd} is not a directory (the editor's project folder is the workspace)."
            )
        session = AcpSession(self.conn, asyncio.get_running_loop(), self.runner)
        session.forms = offers_forms(self.client_capabilities)

        def build():
            from dataclasses import replace

            from nanohermes.configure import load_config
            from nanohermes.runtime import build_runtime

            config = load_config(workspace=cwd, **self.flags)
            config = replace(config, mcp=config.mcp + editor_servers(mcp_servers, {s.name for s in config.mcp}))
            editor = EditorFiles.offered(session, self.client_capabilities)
            runtime = build_runtime(
                config, name, session.emit, approve=session.approve, editor=editor, ask_user=session.ask_form
            )
            session.served = self._served_models(config)
            return runtime

        try:
            runtime = await asyncio.to_thread(build)
        except NanoHermesError as exc:
            raise failure(str(exc)) from None
        except Exception as exc:
            raise failure(report_crash(exc)) from None
        session.attach(runtime)
        self.sessions[session.id] = session
        return session

    def _served_models(self, config) -> list[str]:
        """The models the server lists (asked once per server), with the configured one first."""
        from nanohermes.provider import Provider

        url = config.effective_base_url
        if url not in self._served:
            self._served[url] = Provider(config).served_models()
        return list(dict.fromkeys([config.model, *(self._served[url] or [])]))

    def close(self) -> None:
        for session in self.sessions.values():
            session.close()


def editor_servers(servers: list, taken: set[str]) -> tuple:
    """The MCP servers an editor passes with a session (stdio and HTTP ones), as ours: untrusted,
    so their calls ask. A name config.toml already uses keeps config.toml's server."""
    from nanohermes.mcp.settings import McpServerSettings

    found = []
    for server in servers:
        name = _SERVER_NAME.sub("-", getattr(server, "name", "") or "server")[:40].strip("-") or "server"
        if name in taken:
            continue
        taken.add(name)
        if getattr(server, "command", None):
            env = tuple((e.name, e.value) for e in getattr(server, "env", None) or ())
            found.append(McpServerSettings(name, command=server.command, args=tuple(server.args or ()), env=env))
        elif getattr(server, "url", None) and getattr(server, "type", "http") == "http":
            headers = tuple((h.name, h.value) for h in getattr(server, "headers", None) or ())
            found.append(McpServerSettings(name, url=server.url, headers=headers))
    return tuple(found)
