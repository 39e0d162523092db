"""Sessions: `$NANOHERMES_HOME/sessions/NAME.jsonl`, append-only events, one writer at a time.

Events (one JSON object per line):
  {"type": "meta", "version": 1, "created": ..., "model": ...}
  {"type": "message", "message": {...}}          every non-system message, in full
  {"type": "tool_output", "id": ..., "full": ...}   a tool's whole output when the model saw less
  {"type": "context", "messages": [...], "compaction": {...}}
                                                  the working set after compaction (system excluded)
                                                  and what the compaction did
  {"type": "reset"}                               /reset: the conversation starts over
Storage is not the request: the file keeps everything, `context` events say what is sent.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from nanohermes.errors import SessionError

FORMAT_VERSION = 1
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def sessions_dir(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = home / "sessions"
    path.mkdir(exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask
    return path


def generate_name() -> str:
    return datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def check_name(name: str) -> str:
    if not _NAME.match(name):
        raise SessionError(f"Session name {name!r} is not allowed: use letters, digits, '.', '_' and '-' (up to 100).")
    return name


@dataclass
class SessionState:
    """What replaying a session file gives back."""

    messages: list[dict] = field(default_factory=list)  # the working set, system excluded
    outputs: dict[str, str] = field(default_factory=dict)  # tool call id -> full output (for recall)
    total_messages: int = 0


def replay(lines: list[str], path: Path) -> tuple[SessionState, int | None]:
    """Rebuild state from event lines. Returns (state, byte offset of a torn last line or None)."""
    state = SessionState()
    offset = 0
    for number, line in enumerate(lines, 1):
        start, offset = offset, offset + len(line.encode("utf-8"))
        if not line.strip():
            continue
        try:
            event = json.loads(line)
            if not isinstance(event, dict):
                raise ValueError("not an object")
        except ValueError:
            if number == len(lines) and not line.endswith("\n"):
                return state, start  # a crash mid-write: drop the partial event
            raise SessionError(
                f"Session file {path} is corrupt at line {number}; it was left untouched. "
                "Move it away or start another session with --session NEW_NAME."
            ) from None
        _apply(state, event)
    return state, None


def _apply(state: SessionState, event: dict) -> None:
    kind = event.get("type")
    if kind == "message":
        message = event["message"]
        state.messages.append(message)
        state.total_messages += 1
        if message.get("role") == "tool":  # what recall returns unless a fuller output follows
            state.outputs.setdefault(message.get("tool_call_id", ""), message.get("content") or "")
    elif kind == "tool_output":
        state.outputs[event["id"]] = event["full"]
    elif kind == "context":
        state.messages = list(event["messages"])
    elif kind == "reset":
        state.messages = []


class Session:
    """An open, locked session file. Use as a context manager or call close()."""

    def __init__(self, home: Path, name: str | None = None):
        self.name = check_name(name) if name else generate_name()
        self.generated = name is None
        self.path = sessions_dir(home) / f"{self.name}.jsonl"
        self._lock = self._acquire_lock()
        try:
            self.state = self._load()
            self._file = self._open_for_append()
        except BaseException:
            self._lock.release()
            raise

    def _acquire_lock(self):
        from filelock import FileLock, Timeout

        lock = FileLock(str(self.path) + ".lock", mode=0o600)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise SessionError(
                f"Session {self.name!r} is in use by another nanohermes process ({self.path}). "
                "Finish that one first, or pick another name with --session."
            ) from None
        return lock

    def _load(self) -> SessionState:
        if not self.path.exists():
            return SessionState()
        try:
            raw = self.path.read_bytes()
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SessionError(f"Cannot read session file {self.path} ({exc}); it was left untouched.") from None
        state, torn_at = replay(text.splitlines(keepends=True), self.path)
        if torn_at is not None:
            with open(self.path, "r+b") as f:  # only the unfinished last event goes
                f.truncate(torn_at)
        return state

    def _open_for_append(self):
        new = not self.path.exists()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.chmod(self.path, 0o600)
        f = os.fdopen(fd, "a", encoding="utf-8")
        if new:
            self._write(f, {"type": "meta", "version": FORMAT_VERSION, "created": time.time()})
        return f

    @staticmethod
    def _write(f, event: dict) -> None:
        f.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
        f.flush()

    def append(self, event: dict) -> None:
        try:
            self._write(self._file, event)
        except OSError as exc:
            raise SessionError(f"Cannot write session file {self.path}: {exc.strerror}.") from None

    def record_message(self, message: dict) -> None:
        self.append({"type": "message", "message": message})

    def record_tool_output(self, call_id: str, full: str) -> None:
        self.append({"type": "tool_output", "id": call_id, "full": full})

    def record_context(self, messages: list[dict], compaction: dict | None = None) -> None:
        """The new working set; `compaction` says what produced it (layers, sizes, summary)."""
        event = {"type": "context", "messages": messages}
        if compaction:
            event["compaction"] = compaction
        self.append(event)

    def record_reset(self) -> None:
        self.append({"type": "reset"})

    def size_bytes(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()
        self._lock.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@dataclass(frozen=True)
class SessionInfo:
    name: str
    messages: int
    size: int
    last_used: float


def list_sessions(home: Path) -> list[SessionInfo]:
    """Saved sessions, most recently used first. Unreadable files are listed with -1 messages."""
    folder = home / "sessions"
    if not folder.is_dir():
        return []
    infos = []
    for path in folder.glob("*.jsonl"):
        try:
            count = sum(1 for line in path.open(encoding="utf-8") if '"type":"message"' in line)
        except (OSError, UnicodeDecodeError):
            count = -1
        stat = path.stat()
        infos.append(SessionInfo(path.stem, count, stat.st_size, stat.st_mtime))
    return sorted(infos, key=lambda i: i.last_used, reverse=True)
