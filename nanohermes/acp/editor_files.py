"""The editor's files, through the client's fs/read_text_file and fs/write_text_file, when it
offers them: read_file, edit_file and write_file then see the editor's buffer, unsaved edits
included, and a write updates the buffer the user is looking at (the editor saves it).

What stays as it was: the tools resolve and check every path first (outside the workspace is
refused unless allowed) and the approvals ask before a write or edit runs; this only replaces the
last step, the read or write itself. Only a regular file inside the workspace (links resolved)
and outside the state directory goes through the editor; anything else, and any failure of the
editor to answer (an error, no answer within FS_TIMEOUT_S), reads or writes the disk as before.

Commands never go through the editor's terminal (terminal/*): they run in the OS sandbox
(sandbox/), which a command the editor starts would escape.

Called on the main thread while a turn runs; a cancel (Ctrl-C) stops the wait.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from pathlib import Path

log = logging.getLogger("nanohermes.acp")

FS_TIMEOUT_S = 10.0  # an editor answers from memory; one that does not is read around (the disk), not waited for


class EditorFiles:
    def __init__(self, session, can_read: bool, can_write: bool):
        self.session = session  # AcpSession: its id, connection and loop, its runtime's workspace
        self.can_read, self.can_write = can_read, can_write

    @classmethod
    def offered(cls, session, capabilities) -> EditorFiles | None:
        fs = getattr(capabilities, "fs", None)
        read, write = bool(getattr(fs, "read_text_file", False)), bool(getattr(fs, "write_text_file", False))
        return cls(session, read, write) if read or write else None

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

    def _ask(self, request) -> tuple[bool, object]:
        """(answered, the response): the editor answered in time, or it did not (use the disk)."""
        future = asyncio.run_coroutine_threadsafe(request, self.session.loop)
        try:
            return True, future.result(FS_TIMEOUT_S)
        except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
            future.cancel()
            log.warning("session %s: the editor did not answer a file request; the disk is used", self.session.id)
        except BaseException as exc:  # Ctrl-C (a cancel) goes on up; an editor's error means: use the disk
            future.cancel()
            if not isinstance(exc, Exception):
                raise
            log.warning("session %s: the editor's file request failed (%s); the disk is used", self.session.id, exc)
        return False, None
