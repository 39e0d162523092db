"""The saved sessions as a catalogue: list them, find a workspace's latest, remove, prune.

Listing must stay fast with files of hundreds of MB, so it reads only each file's first and
last few KB: the meta and title events at the head, the stats event close() writes at the
tail. A file without a final stats event (an older version, a crash, a session open right
now) is counted line by line only when it is small; a big one shows its count as unknown.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from nanohermes.errors import SessionError
from nanohermes.fileio import open_regular
from nanohermes.storage.locking import FileLock, LockTimeout
from nanohermes.storage.session import check_name, title_of

HEAD_BYTES = 16_384  # meta and title are the first two events, each far smaller
TAIL_BYTES = 16_384  # the stats event is one short line
SCAN_MAX_BYTES = 32 * 2**20  # counting a file this size takes ~20 ms; bigger ones are not read whole
_MESSAGE_EVENT = b'{"type":"message"'  # how every message event starts (compact JSON, type first)
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


@dataclass(frozen=True)
class SessionInfo:
    name: str
    path: Path
    size: int
    last_used: float  # the file's mtime
    messages: int | None = None  # None: unknown without reading a big file whole
    title: str = ""
    workspace: str | None = None  # None: written before sessions recorded it
    unreadable: bool = False
    parent: str | None = None  # a helper agent's session: the session that started it
    forked_from: str | None = None  # a fork's: the session it was forked from (storage/fork.py)


def list_sessions(home: Path) -> list[SessionInfo]:
    """Every saved session, most recently used first."""
    folder = home / "sessions"
    if not folder.is_dir():
        return []
    infos = []
    for path in folder.glob("*.jsonl"):
        try:
            infos.append(read_info(path))
        except FileNotFoundError:  # removed while we listed
            continue
    return sorted(infos, key=lambda i: i.last_used, reverse=True)


def in_workspace(infos: list[SessionInfo], workspace: Path) -> list[SessionInfo]:
    return [i for i in infos if i.workspace == str(workspace)]


def latest_session(home: Path, workspace: Path) -> SessionInfo | None:
    """The most recently used session started in `workspace` (what --continue resumes); a
    helper's session is never it: --continue means the conversation the user had."""
    mine = [i for i in in_workspace(list_sessions(home), workspace) if i.parent is None]
    return mine[0] if mine else None


def read_info(path: Path) -> SessionInfo:
    stat = path.stat()
    base = dict(name=path.stem, path=path, size=stat.st_size, last_used=stat.st_mtime)
    try:
        with open_regular(path) as f:  # a FIFO among the sessions must not hang the listing
            head = f.read(HEAD_BYTES)
            if stat.st_size > HEAD_BYTES:
                f.seek(max(HEAD_BYTES, stat.st_size - TAIL_BYTES))
                tail = f.read()
            else:
                tail = head
    except OSError:
        return SessionInfo(**base, unreadable=True)
    fields = _head_fields(head, whole=stat.st_size <= HEAD_BYTES)
    stats = _final_stats(tail)
    if stats is not None:
        fields.update({k: v for k, v in stats.items() if v is not None})
    elif stat.st_size <= SCAN_MAX_BYTES:
        fields.update(_scan(path, fields.get("title")))
    return SessionInfo(**base, **fields)


def _head_fields(head: bytes, whole: bool) -> dict:
    """Workspace and title from the first events; the last line may be cut unless `whole`."""
    lines = head.split(b"\n")
    if not whole:
        lines = lines[:-1]
    fields: dict = {}
    for line in lines[:3]:  # meta, title, the first message
        event = _parse(line, (b'{"type":"meta"', b'{"type":"title"'))
        if event is None:
            continue
        if event.get("type") == "meta" and isinstance(event.get("workspace"), str):
            fields["workspace"] = event["workspace"]
        if event.get("type") == "meta" and isinstance(event.get("parent"), str):
            fields["parent"] = event["parent"]
        if event.get("type") == "meta" and isinstance(event.get("forked_from"), str):
            fields["forked_from"] = event["forked_from"]
        elif event.get("type") == "title":
            fields["title"] = str(event.get("title") or "")
    return fields


def _final_stats(tail: bytes) -> dict | None:
    """The stats event, if it is the file's last event (later events would make it stale)."""
    last = tail.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    event = _parse(last, (b'{"type":"stats"',))
    if event is None or not isinstance(event.get("messages"), int):
        return None
    workspace = event.get("workspace")
    return {
        "messages": event["messages"],
        "title": event.get("title") or None,
        "workspace": workspace if isinstance(workspace, str) else None,
    }


def _scan(path: Path, title: str | None) -> dict:
    """Count the message events of a small file, and take its title from the first request."""
    count = 0
    try:
        with open_regular(path) as f:
            for line in f:
                if not line.startswith(_MESSAGE_EVENT):
                    continue
                count += 1
                if title is None:
                    message = (_parse(line, (_MESSAGE_EVENT,)) or {}).get("message") or {}
                    if message.get("role") == "user":
                        title = title_of(message.get("content") or "")
    except OSError:
        return {"unreadable": True}
    return {"messages": count, "title": title or ""}


def _parse(line: bytes, prefixes: tuple[bytes, ...]) -> dict | None:
    if not line.startswith(prefixes):
        return None
    try:
        event = json.loads(line)
    except ValueError:  # a torn line: the session loader mends it, a listing just skips it
        return None
    return event if isinstance(event, dict) else None


# -- removing ---------------------------------------------------------------------------


def remove_session(home: Path, name: str) -> None:
    """Delete a session's file and its checkpoints (storage/checkpoints.py, snapshots.py);
    SessionError if there is none or another process has it open."""
    path = home / "sessions" / f"{check_name(name)}.jsonl"
    if not path.exists():
        raise SessionError(f"No session named {name!r}; `nanohermes sessions --all` lists them.")
    lock_path = Path(str(path) + ".lock")
    lock = FileLock(lock_path)
    try:
        lock.acquire(timeout=0)
    except LockTimeout:
        raise SessionError(f"Session {name!r} is in use by another nanohermes process; it was not removed.") from None
    try:
        path.unlink(missing_ok=True)
        shutil.rmtree(home / "checkpoints" / name, ignore_errors=True)
        lock_path.unlink(missing_ok=True)
    finally:
        lock.release()


def parse_age(text: str) -> float:
    """'30d' -> seconds. Units: s, m, h, d, w. ValueError on anything else."""
    match = _AGE.match(text)
    if not match:
        raise ValueError(f"{text!r} is not an age: use a number and a unit, e.g. 30d, 12h, 2w (s, m, h, d, w)")
    return float(match.group(1)) * _AGE_UNITS[match.group(2)]


def prune_candidates(infos: list[SessionInfo], older_than_s: float, now: float | None = None) -> list[SessionInfo]:
    """The sessions last used more than `older_than_s` ago."""
    cutoff = (time.time() if now is None else now) - older_than_s
    return [i for i in infos if i.last_used < cutoff]
