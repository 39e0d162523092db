"""One language server's process and its JSON-RPC over stdio.

Started by tools/processes.py's start_child like every command (its own process group, no
provider key, confined by the policy given). Three daemon threads keep it moving whatever the
caller waits on: one reads its messages (answers to our requests, its diagnostics, its own
requests, answered at once so a server that waits on them goes on), one writes ours (a server that
stops reading its input stalls that thread, never the caller), one drains its stderr (kept as a
short tail, for the note that says why it stopped). Every wait has a deadline: past it, ServerSlow;
a server that exited or broke the protocol, ServerGone, saying why.
"""

from __future__ import annotations

import queue
import signal
import subprocess
import threading
import time
from collections import deque
from pathlib import Path
from urllib.parse import unquote

from nanohermes.lsp.frames import FrameError, encode, read_message
from nanohermes.sandbox.policy import Policy
from nanohermes.text import neutralize
from nanohermes.tools.processes import KILL_GRACE, READ_CHUNK, end_group, release, signal_group, start_child

STDERR_TAIL_BYTES = 4_096  # enough for the last lines of a traceback
# How long a server whose output closed is waited on to exit and finish its stderr, for the note
# that says why it stopped: its output closing is it exiting, done in milliseconds; one that
# closed it and goes on is said as such.
EXIT_WAIT_S = 5.0
SHOWN_STDERR_CHARS = 200  # the last line quoted when a server stops
# Requests a server may send that want an answer and nothing from us: an empty one lets it go on.
ANSWERED_EMPTY = frozenset(
    {"window/workDoneProgress/create", "client/registerCapability", "client/unregisterCapability"}
    | {"window/showMessageRequest", "workspace/diagnostic/refresh", "workspace/semanticTokens/refresh"}
)
METHOD_NOT_FOUND = -32601
PUBLISH = "textDocument/publishDiagnostics"


class ServerGone(Exception):
    """The server exited, closed its output or broke the protocol: why, in words."""


class ServerSlow(Exception):
    """The server did not answer before the deadline."""


class Connection:
    """A started server: `request` and `notify`; `diagnostics` waits for a document's."""

    def __init__(self, argv: list[str], cwd: Path, policy: Policy | None, folders: list[dict]) -> None:
        self.proc = start_child(argv, cwd, policy, stdin=True)  # ToolError: the sandbox cannot confine it here
        self.folders = folders  # what workspace/workspaceFolders answers
        self._changed = threading.Condition()
        self._answers: dict[int, dict] = {}
        self._published: dict[str, tuple[int, int | None, list]] = {}  # uri → (serial, version, diagnostics)
        self._serial = 0  # publications counted, for a server that does not say which version it checked
        self._versioned = False  # it said a version once: then only a publication of the version sent counts
        self._broken = ""  # why the protocol broke, if it did
        self._ended = False
        self._next_id = 0
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._stderr: deque[bytes] = deque()
        threads = [threading.Thread(target=t, daemon=True, name=f"lsp{t.__name__}") for t in (self._write, self._drain)]
        self._drainer = threads[1]
        threads.append(threading.Thread(target=self._read, daemon=True, name="lsp_read"))
        for thread in threads:
            thread.start()

    # ------------------------------------------------------------------ asking

    def request(self, method: str, params: dict | None, deadline: float) -> object:
        """The result of `method`, or ServerGone (also for an error answer) or ServerSlow."""
        with self._changed:
            self._next_id += 1
            ident = self._next_id
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, **({"params": params} if params else {})})
        answer = self._wait(lambda: self._answers.pop(ident, None), deadline)
        if "error" in answer:
            error = answer["error"] if isinstance(answer["error"], dict) else {}
            raise ServerGone(f"it answered {method} with an error: {neutralize(str(error.get('message', '')))[:200]}")
        return answer.get("result")

    def notify(self, method: str, params: dict | None = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})})

    @property
    def serial(self) -> int:
        with self._changed:
            return self._serial

    def diagnostics(self, uri: str, version: int, since: int, deadline: float) -> list:
        """The diagnostics the server publishes for `version` of `uri` (a server that says no
        version: its first publication after serial `since`), or ServerGone, or ServerSlow."""

        def found() -> list | None:
            serial, said, items = self._published.get(unquote(uri), (0, None, []))
            if said == version or (said is None and not self._versioned and serial > since):
                return items
            return None

        return self._wait(found, deadline)

    def _wait(self, found, deadline: float):
        with self._changed:
            while (result := found()) is None and not self._ended:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ServerSlow()
                self._changed.wait(left)
        if result is None:
            raise ServerGone(self._why_ended())
        return result

    def _send(self, message: dict) -> None:
        if self._ended:
            raise ServerGone(self._why_ended())
        self._outbox.put(encode(message))

    # ------------------------------------------------------------------ its threads

    def _read(self) -> None:
        try:
            while (message := read_message(self.proc.stdout)) is not None:
                self._take(message)
        except FrameError as exc:
            self._broken = str(exc)
        except (OSError, ValueError):  # the pipe closed under us: stopping
            pass
        finally:
            self.proc.stdout.close()  # here, not by close(): closing a pipe another thread reads waits for that read
        with self._changed:
            self._ended = True
            self._changed.notify_all()
        self._outbox.put(None)  # the writer ends too

    def _take(self, message: dict) -> None:
        method, ident = message.get("method"), message.get("id")
        if method is None and isinstance(ident, int):
            with self._changed:
                self._answers[ident] = message
                self._changed.notify_all()
        elif method is not None and ident is not None:
            self._answer(method, ident, message.get("params"))
        elif method == PUBLISH and isinstance(params := message.get("params"), dict):
            self._publish(params)

    def _publish(self, params: dict) -> None:
        uri, version, items = params.get("uri"), params.get("version"), params.get("diagnostics")
        if not isinstance(uri, str) or not isinstance(items, list):
            return
        version = version if isinstance(version, int) and not isinstance(version, bool) else None
        with self._changed:
            self._serial += 1
            self._versioned = self._versioned or version is not None
            self._published[unquote(uri)] = (self._serial, version, items)  # a server may quote it its own way
            self._changed.notify_all()

    def _answer(self, method: str, ident, params) -> None:
        """Answer a server's own request, so that a server waiting on it goes on."""
        if method == "workspace/configuration":
            items = params.get("items") if isinstance(params, dict) else None
            reply = {"result": [None] * (len(items) if isinstance(items, list) else 0)}
        elif method == "workspace/workspaceFolders":
            reply = {"result": self.folders}
        elif method in ANSWERED_EMPTY:
            reply = {"result": None}
        else:
            reply = {"error": {"code": METHOD_NOT_FOUND, "message": f"{method} is not supported"}}
        self._outbox.put(encode({"jsonrpc": "2.0", "id": ident, **reply}))

    def _write(self) -> None:
        try:
            while (data := self._outbox.get()) is not None:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
        except (OSError, ValueError):  # it exited or stopped reading
            pass
        finally:
            try:
                self.proc.stdin.close()
            except OSError:  # what was left unwritten cannot be flushed to a server that is gone
                pass

    def _drain(self) -> None:
        kept = 0
        try:
            while chunk := self.proc.stderr.read1(READ_CHUNK):
                self._stderr.append(chunk)
                kept += len(chunk)
                while kept > STDERR_TAIL_BYTES and len(self._stderr) > 1:
                    kept -= len(self._stderr.popleft())
        except (OSError, ValueError):
            pass
        finally:
            self.proc.stderr.close()

    # ------------------------------------------------------------------ the end

    def _why_ended(self) -> str:
        if self._broken:
            return f"it broke the protocol: {self._broken}"
        try:
            code = self.proc.wait(timeout=EXIT_WAIT_S)  # its output closed: it is exiting
        except subprocess.TimeoutExpired:  # still running with its output closed
            return "it closed its output"
        self._drainer.join(EXIT_WAIT_S)  # its last words on stderr (read only once the drain has ended)
        said = b"" if self._drainer.is_alive() else b"".join(self._stderr)
        tail = said[-STDERR_TAIL_BYTES:].decode("utf-8", "replace").strip().splitlines()
        said = f": {neutralize(tail[-1].strip())[:SHOWN_STDERR_CHARS]}" if tail else ""
        return f"it exited (code {code}){said}"

    def close(self, grace: float = KILL_GRACE) -> None:
        """shutdown and exit, as LSP ends a server; killed, with all it started, if it does not exit.
        Its group is killed before any pipe is closed: the reading threads end on their pipes' end."""
        deadline = time.monotonic() + grace
        try:
            self.request("shutdown", None, deadline)
            self.notify("exit")
            self.proc.wait(timeout=max(deadline - time.monotonic(), 0))
        except (ServerGone, ServerSlow, subprocess.TimeoutExpired):  # gone, slow or stuck: killed below
            pass
        self._outbox.put(None)
        if self.proc.poll() is None:
            signal_group(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        end_group(self.proc.pid)  # what it left running in its group
        release(self.proc)  # what the sandbox set up for it
