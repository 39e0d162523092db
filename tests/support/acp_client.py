"""The client side of the Agent Client Protocol, from the `agent-client-protocol` SDK, driving a
real `nanohermes acp` process over its stdin and stdout, as an editor would.

The SDK is asyncio; the tests are not. AcpHarness runs a loop in a thread and `run(coro)`
waits for one coroutine on it. RecordingClient keeps every session update and answers
permission requests with what the test says ("allow", "always", "reject", or "wait": only a
cancel of the turn answers it, with the cancelled outcome, as the protocol asks a client to).
With `files=True` it is an editor offering fs/read_text_file and fs/write_text_file: `buffers`
are its unsaved files (path -> text), read before the disk; a write is saved to disk. With
`terminal=True` it runs terminal/create's commands as real processes (`ran` lists them). With
`forms=True` it declares ACP's unstable elicitation forms and answers elicitation/create with
`form_answers`. Every message the agent sends is checked against the protocol's schema
(acp_schema.SchemaCheck).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from asyncio.subprocess import PIPE, STDOUT
from collections import defaultdict
from pathlib import Path

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    CancelElicitationResponse,
    ClientCapabilities,
    CreateTerminalResponse,
    DeclineElicitationResponse,
    DeniedOutcome,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WriteTextFileResponse,
)

from tests.support.acp_schema import SchemaCheck

RUN_TIMEOUT_S = 60.0  # one protocol exchange on a loaded machine; a hang fails the test instead of the suite


class RecordingClient:
    def __init__(self) -> None:
        self.updates: dict[str, list] = defaultdict(list)
        self.questions: list = []  # (session id, tool call, options)
        self.answer = "allow"
        self.asked = threading.Event()
        self._waiting: list[asyncio.Future] = []
        self.files = False
        self.buffers: dict[str, str] = {}
        self.fs_calls: list[tuple[str, str]] = []  # (read or write, path)
        self.terminal = False
        self.ran: list[str] = []  # the commands run in a terminal
        self.terminal_answer_s = 0.0  # how long terminal/create takes to answer after the command started
        self.terminals: dict = {}  # open ones: id -> (process, its output, its reader)
        self.forms: list = []  # (message, mode) of each elicitation/create (an editor that declared forms)
        self.form_answers: list = []  # the next forms' answers: content to accept, or "decline" / "cancel"

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.questions.append((session_id, tool_call, options))
        self.asked.set()
        if self.answer == "wait":
            waiter = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            await waiter
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(option_id=self.answer, outcome="selected"))

    def reset(self) -> None:
        """As new for the next test: answers allowed, no buffers, nothing recorded as run."""
        self.answer = "allow"
        self.buffers.clear()
        self.fs_calls.clear()
        self.ran.clear()
        self.terminal_answer_s = 0.0

    def cancelled(self) -> None:
        """The user cancelled the turn: every question still open is answered `cancelled`."""
        for waiter in self._waiting:
            if not waiter.done():
                waiter.set_result(None)

    async def create_elicitation(self, message, mode, **kwargs):
        """ACP's (unstable) form: answered with the next of `form_answers` (none left: declined)."""
        self.forms.append((message, mode))
        answer = self.form_answers.pop(0) if self.form_answers else "decline"
        if answer == "cancel":
            return CancelElicitationResponse(action="cancel")
        if answer == "decline":
            return DeclineElicitationResponse(action="decline")
        return AcceptElicitationResponse(action="accept", content=answer)

    async def session_update(self, session_id, update, **kwargs):
        self.updates[session_id].append(update)

    def text(self, session_id: str) -> str:
        return "".join(u.content.text for u in self.updates[session_id] if u.session_update == "agent_message_chunk")

    def of_kind(self, session_id: str, kind: str) -> list:
        return [u for u in self.updates[session_id] if u.session_update == kind]

    async def write_text_file(self, session_id, path, content, **kwargs):
        if not self.files:
            raise RequestError.method_not_found("fs/write_text_file")
        self.fs_calls.append(("write", path))
        self.buffers.pop(path, None)
        Path(path).write_text(content)
        return WriteTextFileResponse()

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        if not self.files:
            raise RequestError.method_not_found("fs/read_text_file")
        self.fs_calls.append(("read", path))
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text())
        except OSError as exc:
            raise RequestError.resource_not_found(path) from exc

    async def create_terminal(self, session_id, command, args=None, env=None, cwd=None, **kwargs):
        if not self.terminal:
            raise RequestError.method_not_found("terminal/create")
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, stdout=PIPE, stderr=STDOUT, start_new_session=True
        )
        terminal_id = f"terminal-{len(self.ran)}"
        self.ran.append((args or [])[-1])
        output = bytearray()
        reading = asyncio.ensure_future(_read_into(process.stdout, output))
        self.terminals[terminal_id] = (process, output, reading)
        await asyncio.sleep(self.terminal_answer_s)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id, terminal_id, **kwargs):
        process, output, reading = self.terminals[terminal_id]
        ended = process.returncode is not None and reading.done()
        status = TerminalExitStatus(exit_code=process.returncode) if ended and process.returncode >= 0 else None
        if ended and process.returncode < 0:
            status = TerminalExitStatus(signal=signal.Signals(-process.returncode).name)
        return TerminalOutputResponse(output=output.decode(errors="replace"), truncated=False, exit_status=status)

    async def kill_terminal(self, session_id, terminal_id, **kwargs):
        process, _, _ = self.terminals[terminal_id]
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()

    async def release_terminal(self, session_id, terminal_id, **kwargs):
        await self.kill_terminal(session_id, terminal_id)
        self.terminals.pop(terminal_id)

    async def ext_method(self, method, params):
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method, params):
        return None


class AcpHarness:
    """`python -m nanohermes acp` with `env`, and the SDK's ClientSideConnection to it. Closing
    closes its stdin, then waits `shutdown_timeout` seconds before the SDK terminates it."""

    def __init__(
        self,
        env: dict,
        cwd: Path,
        log: Path,
        shutdown_timeout: float = 10.0,
        files: bool = False,
        terminal=False,
        forms: bool = False,
    ):
        """`forms`: the editor declares ACP's (unstable) elicitation forms."""
        self.client = RecordingClient()
        self.client.files, self.client.terminal = files, terminal
        self.check = SchemaCheck()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.log = open(log, "wb")  # noqa: SIM115  (closed by close())
        self._spawn = spawn_agent_process(
            self.client,
            sys.executable,
            "-m",
            "nanohermes",
            "acp",
            env=env,
            cwd=cwd,
            transport_kwargs={"stderr": self.log, "shutdown_timeout": shutdown_timeout},
            observers=[self.check],
            use_unstable_protocol=forms,  # else the SDK's client answers elicitation/create "method not found"
        )
        self.conn, self.process = self.run(self._spawn.__aenter__())
        fs = FileSystemCapabilities(read_text_file=files, write_text_file=files)
        elicitation = ElicitationCapabilities(form=ElicitationFormCapabilities()) if forms else None
        offered = ClientCapabilities(fs=fs, terminal=terminal, elicitation=elicitation)
        self.initialized = self.run(
            self.conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=offered)
        )

    def run(self, coroutine, timeout: float = RUN_TIMEOUT_S):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def start(self, coroutine):
        """Send without waiting: a concurrent future for the answer."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def close(self) -> int | None:
        try:
            self.run(self._spawn.__aexit__(None, None, None))
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)
            self.log.close()
        return self.process.returncode


async def _read_into(stream, output: bytearray) -> None:
    while chunk := await stream.read(65_536):
        output += chunk


def workspace(tmp_path: Path, notes: str) -> Path:
    """A project folder with one file, notes.txt, holding `notes`."""
    path = tmp_path / "project"
    path.mkdir()
    (path / "notes.txt").write_text(notes)
    return path
