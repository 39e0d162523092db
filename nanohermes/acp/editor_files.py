"""The editor's files, through the client's fs/read_text_file and fs/write_text_file, and its
terminal (terminal/*), when it offers them: read_file, edit_file and write_file then see the
editor's buffer, unsaved edits included, and a write updates the buffer the user is looking at
(the editor saves it); a command that runs unconfined runs in a terminal the editor shows.

What stays as it was: the tools resolve and check every path first (outside the workspace is
refused unless allowed) and the approvals ask before a write or edit runs; this only replaces the
last step, the read or write itself. Only a regular file inside the workspace (links resolved)
and outside the state directory goes through the editor; anything else, and any failure of the
editor to answer (an error, no answer within FS_TIMEOUT_S), reads or writes the disk as before.

A command goes to the editor's terminal only when it would run outside the OS sandbox anyway
(the sandbox's level is off, or the user approved this call `unsandboxed`): one the sandbox
confines runs in it, as before, since a process the editor starts would escape it. The approval
comes first either way, and a cancel kills the editor's terminal as Ctrl-C kills our own process
group. Background commands stay ours (task_output reads them).

Called on the main thread while a turn runs; a cancel (Ctrl-C) stops the wait.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import signal
import time
from pathlib import Path

from acp import tool_terminal_ref, update_tool_call

log = logging.getLogger("nanohermes.acp")

FS_TIMEOUT_S = 10.0  # an editor answers from memory; one that does not is read around (the disk), not waited for
TERMINAL_POLL_S = 0.1  # how often a running command's output is asked for: live enough, few requests
TERMINAL_OUTPUT_BYTES = 1_048_576  # what the editor keeps of a command's output; ours is capped by the clamp
SHELL = "bash"  # as run_command's own processes


class EditorFiles:
    def __init__(self, session, can_read: bool, can_write: bool, can_run: bool = False):
        self.session = session  # AcpSession: its id, connection and loop, its runtime's workspace
        self.can_read, self.can_write, self.can_run = can_read, can_write, can_run

    @classmethod
    def offered(cls, session, capabilities) -> EditorFiles | None:
        fs = getattr(capabilities, "fs", None)
        read, write = bool(getattr(fs, "read_text_file", False)), bool(getattr(fs, "write_text_file", False))
        run = bool(getattr(capabilities, "terminal", False))
        return cls(session, read, write, run) if read or write or run else None

    def run_shell(self, command: str, cwd, timeout: float, on_output, outcome) -> bool:
        """Run `command` in a terminal of the editor's, filling `outcome` (shell.py's) as our own run
        does; False when the editor has none to give (run it ourselves). KeyboardInterrupt (a cancel)
        kills it and goes on up."""
        if not self.can_run:
            return False
        conn, session_id = self.session.conn, self.session.id
        created = conn.create_terminal(
            session_id=session_id,
            command=SHELL,
            args=["-c", command],
            cwd=str(cwd),
            output_byte_limit=TERMINAL_OUTPUT_BYTES,
        )
        future = asyncio.run_coroutine_threadsafe(created, self.session.loop)
        try:
            answered, terminal = self._wait(future, cancel=False)
        except BaseException:  # a cancel while the editor starts it: the command runs there all the same
            self._end_when_made(future)
            raise
        if not answered:
            return False
        terminal_id = terminal.terminal_id
        self.session.send_update(update_tool_call(self.session.running_card, content=[tool_terminal_ref(terminal_id)]))
        try:
            self._follow(terminal_id, time.monotonic() + timeout, on_output, outcome)
        except BaseException:
            self._ask(conn.kill_terminal(session_id=session_id, terminal_id=terminal_id))
            raise
        finally:
            self._ask(conn.release_terminal(session_id=session_id, terminal_id=terminal_id))
        return True

    def _follow(self, terminal_id: str, deadline: float, on_output, outcome) -> None:
        conn, session_id, seen = self.session.conn, self.session.id, ""
        while True:
            answered, out = self._ask(conn.terminal_output(session_id=session_id, terminal_id=terminal_id))
            if not answered:
                raise KeyboardInterrupt  # the editor lost it: stopped as a cancel is
            added = out.output[len(seen) :] if out.output.startswith(seen) else out.output
            seen = out.output
            if added:
                data = added.encode("utf-8", "replace")
                outcome.stdout.add(data)
                on_output(data)
            if out.exit_status is not None:
                outcome.code = _exit_code(out.exit_status)
                return
            if time.monotonic() > deadline:
                self._ask(conn.kill_terminal(session_id=session_id, terminal_id=terminal_id))
                outcome.timed_out, outcome.code = True, -signal.SIGKILL
                return
            time.sleep(TERMINAL_POLL_S)  # Ctrl-C (a cancel) lands here as anywhere on the main thread

    def read_text(self, path: Path) -> str | None:
        """The editor's text of `path`, or None: read the disk."""
        if not self.can_read or not self._lent(path):
            return None
        answered, response = self._ask(self.session.conn.read_text_file(session_id=self.session.id, path=str(path)))
        return response.content if answered else None

    def write_text(self, path: Path, data: bytes) -> bool:
        """Whether the editor wrote `data` to `path` (False: write the disk)."""
        if not self.can_write or not self._lent(path):
            return False
        try:
            text = data.decode("utf-8")  # the editor takes text: undecodable bytes go to the disk as they are
        except UnicodeDecodeError:
            return False
        request = self.session.conn.write_text_file(session_id=self.session.id, path=str(path), content=text)
        return self._ask(request)[0]

    def _lent(self, path: Path) -> bool:
        """A regular file (or one to create) inside the workspace, not in the state directory."""
        runtime = self.session.runtime
        if runtime is None:
            return False
        try:
            target = Path(path).resolve()
            workspace = Path(runtime.config.workspace).resolve()
            home = Path(runtime.config.home).resolve()
        except (OSError, RuntimeError):
            return False
        if not target.is_relative_to(workspace) or target.is_relative_to(home):
            return False
        return target.is_file() or not target.exists()

    def _end_when_made(self, future: concurrent.futures.Future) -> None:
        """A cancel came while the editor made a terminal: once it says which, kill and release it
        (a cancel before the answer had left it running, `sleep 30` in a loaded test run)."""
        try:
            terminal_id = future.result(FS_TIMEOUT_S).terminal_id
        except BaseException:  # no terminal, or no answer in time (or a second Ctrl-C): nothing to end
            future.cancel()
            return
        conn, session_id = self.session.conn, self.session.id
        self._ask(conn.kill_terminal(session_id=session_id, terminal_id=terminal_id))
        self._ask(conn.release_terminal(session_id=session_id, terminal_id=terminal_id))

    def _ask(self, request) -> tuple[bool, object]:
        """(answered, the response): the editor answered in time, or it did not (use the disk)."""
        return self._wait(asyncio.run_coroutine_threadsafe(request, self.session.loop))

    def _wait(self, future: concurrent.futures.Future, cancel: bool = True) -> tuple[bool, object]:
        """`_ask`'s wait; `cancel`: a Ctrl-C (a cancel) abandons the request, else it runs on."""
        try:
            return True, future.result(FS_TIMEOUT_S)
        except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
            future.cancel()
            log.warning("session %s: the editor did not answer a file request; the disk is used", self.session.id)
        except BaseException as exc:  # Ctrl-C (a cancel) goes on up; an editor's error means: use the disk
            if cancel or isinstance(exc, Exception):
                future.cancel()
            if not isinstance(exc, Exception):
                raise
            log.warning("session %s: the editor's file request failed (%s); the disk is used", self.session.id, exc)
        return False, None


def _exit_code(status) -> int:
    """The terminal's exit as our processes' returncode: the code, or minus the signal's number."""
    if status.exit_code is not None:
        return status.exit_code
    try:
        return -signal.Signals(status.signal).value
    except (KeyError, ValueError):
        return -1
