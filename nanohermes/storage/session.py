"""Sessions: `$NANOHERMES_HOME/sessions/NAME.jsonl`, append-only events, one writer at a time.

Events (one JSON object per line):
  {"type": "meta", "version": 1, "created": ..., "workspace": ..., "parent": ..., "forked_from": ...}
                                                  first line (older files lack the workspace); a
                                                  helper agent's session names its parent's, a
                                                  fork (storage/fork.py) the session it came from
  {"type": "title", "title": ...}                 the first request (whitespace collapsed, cut), written
                                                  just before it, so listing reads it from the head
  {"type": "message", "message": {...}, "facts": {...}, "memory": "...", "files": "...", "synthetic": "..."}
                                                  every non-system message, in full; a tool
                                                  result's facts (exit code, path, …), the
                                                  memory block and the named files sent with a
                                                  user message, and
                                                  the kind of a message the loop wrote for the
                                                  model (synthetic.py) beside it
  {"type": "tool_output", "id": ..., "full": ...}   a tool's whole output when the model saw less
  {"type": "compaction", "messages": [3, 4, {...}, 9, ...], "compaction": {...}}
                                                  the working set after a compaction (system
                                                  excluded): an int is the message at that index
                                                  of the working set before, a dict a new message
                                                  (summary, placeholder, trim); and what it did
  {"type": "usage", ...}                          one request's tokens, cached tokens and chars
  {"type": "reset"}                               /reset: the conversation starts over
  {"type": "rewind", "prompts": k, "messages": [3, {...}, ...]}
                                                  /rewind: the working set as it was before the
                                                  request k + 1 (indices into the one before, as
                                                  a compaction); later requests leave the list
  {"type": "stats", "messages": n, "title": ..., "workspace": ...}
                                                  written on close: listing reads it from the tail
                                                  instead of counting a file that may be hundreds of MB
Storage is not the request: the file keeps everything, compactions say what is sent, and a
compaction adds only what is new. (Sessions written before 0.2 hold `context` events: the
whole working set after a compaction. They still load.)
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from datetime import datetime
from pathlib import Path

from nanohermes.errors import SessionError
from nanohermes.fileio import open_regular
from nanohermes.storage.locking import FileLock, LockTimeout
from nanohermes.storage.replay import (
    TITLE_MAX_CHARS,
    Prompt,
    SessionState,
    encode_working_set,
    first_line,
    replay,
    title_of,
)
from nanohermes.synthetic import synthetic_kind, untagged
from nanohermes.text import valid_unicode_in

__all__ = [
    "TITLE_MAX_CHARS",
    "Session",
    "SessionState",
    "check_name",
    "sessions_dir",
    "title_of",
]  # replay.py holds the rest

FORMAT_VERSION = 1
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")  # used with fullmatch: `$` would let a final "\n" through


def sessions_dir(home: Path) -> Path:
    """`home/sessions`, created 0700; SessionError when the state directory cannot be written."""
    path = home / "sessions"
    try:
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.mkdir(exist_ok=True, mode=0o700)
        os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask
    except OSError as exc:
        raise SessionError(unusable_state_dir(home, exc.strerror or str(exc))) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise SessionError(unusable_state_dir(home, f"{path} is not writable"))
    return path


def unusable_state_dir(home: Path, why: str) -> str:
    return (
        f"Cannot use the state directory {home} ({why}): NanoHermes keeps sessions and memory there. "
        "Make it writable, or point NANOHERMES_HOME at a directory you can write."
    )


def generate_name() -> str:
    return datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def _unused_name(folder: Path) -> str:
    """A generated name no session uses yet, claimed by creating its file (O_EXCL), so two
    runs started in the same second never share one."""
    while True:
        name = generate_name()
        try:
            os.close(os.open(folder / f"{name}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            return name
        except FileExistsError:
            continue
        except OSError as exc:
            raise SessionError(unusable_state_dir(folder.parent, exc.strerror or str(exc))) from None


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise SessionError(f"Session name {name!r} is not allowed: use letters, digits, '.', '_' and '-' (up to 100).")
    return name


class Session:
    """An open, locked session file. Use as a context manager or call close()."""

    def __init__(
        self, home: Path, name: str | None = None, workspace: Path | str | None = None, parent: str | None = None
    ):
        """`workspace` goes into a new file's meta event, so listings can show and filter by it;
        `parent` too: the session of the agent that started this one as its helper."""
        folder = sessions_dir(home)
        self.generated = name is None
        self.name = check_name(name) if name else _unused_name(folder)
        self.path = folder / f"{self.name}.jsonl"
        self.workspace = str(workspace) if workspace is not None else None
        self.parent = parent
        self._wrote = False  # anything recorded since opening: close() then writes stats
        self._lock = self._acquire_lock()
        try:
            self.state = self._load()
            self.created = not self.state.total_messages and (not self.path.exists() or self.path.stat().st_size == 0)
            self._file = self._open_for_append()
        except BaseException:
            self._lock.release()
            raise

    def _acquire_lock(self):
        lock = FileLock(str(self.path) + ".lock")
        try:
            lock.acquire(timeout=0)
        except LockTimeout:
            raise SessionError(
                f"Session {self.name!r} is in use by another nanohermes process ({self.path}). "
                "Finish that one first, or pick another name with --session."
            ) from None
        except OSError as exc:  # the lock's path is a directory, or not writable
            raise SessionError(
                f"Cannot lock session {self.name!r}: {lock.path} cannot be opened ({exc.strerror}). "
                "Remove whatever is at that path, or pick another name with --session."
            ) from None
        return lock

    def _load(self) -> SessionState:
        if not self.path.exists():
            return SessionState()
        try:
            with open_regular(self.path) as f:  # a FIFO would wait for a writer for ever
                state, mend_at = replay(f, self.path)
                size = os.fstat(f.fileno()).st_size
        except OSError as exc:
            raise SessionError(
                f"Cannot read session file {self.path} ({exc.strerror}); it was left untouched."
            ) from None
        if mend_at is not None:
            with open(self.path, "r+b") as f:
                if mend_at < size:  # drop only the unfinished last event
                    f.truncate(mend_at)
                else:  # a complete last event without its newline: terminate it
                    f.seek(0, os.SEEK_END)
                    f.write(b"\n")
        return state

    def _open_for_append(self):
        new = not self.path.exists() or self.path.stat().st_size == 0
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.chmod(self.path, 0o600)
        except OSError as exc:
            raise SessionError(f"Cannot write session file {self.path} ({exc.strerror}).") from None
        f = os.fdopen(fd, "a", encoding="utf-8")
        if new:
            meta = {"type": "meta", "version": FORMAT_VERSION, "created": time.time()}
            if self.workspace:
                meta["workspace"] = self.workspace
            if self.parent:
                meta["parent"] = self.parent
            self._write(f, meta)
        return f

    @staticmethod
    def _write(f, event: dict) -> None:
        try:  # the text layer encodes the whole line before writing any of it
            f.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
        except UnicodeEncodeError:  # a lone surrogate got this far: write it shown, never lose the event
            f.write(json.dumps(valid_unicode_in(event), ensure_ascii=False, separators=(",", ":")) + "\n")
        f.flush()

    def append(self, event: dict) -> None:
        self._wrote = True
        try:
            self._write(self._file, event)
        except OSError as exc:
            raise SessionError(f"Cannot write session file {self.path}: {exc.strerror}.") from None

    def record_message(self, message: dict, facts: dict | None = None, memory: str = "", files: str = "") -> None:
        """`memory`: the memory block sent with this user message, `files`: the files it named,
        as they were attached (`message` holds the user's own words)."""
        if self.state.title is None and message.get("role") == "user":
            self.state.title = title_of(message.get("content") or "")
            self.append({"type": "title", "title": self.state.title})
        if message.get("role") == "user" and not synthetic_kind(message):
            self.state.prompt_serial += 1
            offset = os.fstat(self._file.fileno()).st_size  # every event is flushed whole: the file's end
            self.state.prompts.append(Prompt(self.state.prompt_serial, offset, first_line(message.get("content"))))
        self.state.total_messages += 1
        event = {"type": "message", "message": untagged(message)}
        if kind := synthetic_kind(message):
            event["synthetic"] = kind
        if facts:
            event["facts"] = facts
        if memory:
            event["memory"] = memory
        if files:
            event["files"] = files
        self.append(event)

    def record_usage(self, usage: dict) -> None:
        self.append({"type": "usage", **usage})

    def record_tool_output(self, call_id: str, full: str) -> None:
        self.append({"type": "tool_output", "id": call_id, "full": full})

    def record_compaction(self, before: list[dict], after: list[dict], compaction: dict) -> None:
        """The working set after a compaction, as a change to the one before (system excluded):
        what it kept is named by index, only what is new is written. `compaction` says what
        was done (layers, sizes)."""
        self.append({"type": "compaction", "messages": encode_working_set(before, after), "compaction": compaction})

    def record_reset(self) -> None:
        self.append({"type": "reset"})

    def record_rewind(self, before: list[dict], after: list[dict], prompts: int) -> None:
        """/rewind: the working set `after` (system excluded), as the conversation was before
        its request number `prompts` + 1; messages still in `before` are named by index."""
        index = {json.dumps(m, sort_keys=True): i for i, m in enumerate(before)}
        encoded = [index.get(json.dumps(m, sort_keys=True), m) for m in after]
        self.append({"type": "rewind", "prompts": prompts, "messages": encoded})
        del self.state.prompts[prompts:]

    def size_bytes(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    @property
    def saved(self) -> bool:
        """Whether the file exists: close() removes a session it created that stayed empty."""
        return self.path.exists()

    def close(self) -> None:
        if not self._file.closed:
            self._close_file()
        self._lock.release()

    def _close_file(self) -> None:
        if self._wrote:
            try:
                self.append(
                    {
                        "type": "stats",
                        "messages": self.state.total_messages,
                        "title": self.state.title,
                        "workspace": self.state.workspace or self.workspace,
                    }
                )
            except SessionError:
                pass  # a full disk must not turn leaving into an error; listing then counts the file
        self._file.close()
        if self.created and not self._wrote:  # opened and left without a word: nothing to resume
            self.path.unlink(missing_ok=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
