"""Snapshots of the workspace's files: what commands changed, and what /rewind puts back.

Kept beside the session's write_file/edit_file checkpoints, outside the workspace and never in
its .git: `$NANOHERMES_HOME/checkpoints/SESSION/packs/` (each content once, compressed:
storage/blobs.py) and `workspace-HASH.jsonl` (one per workspace path), a line per snapshot
holding only what differs from the snapshot before it (the first holds the whole manifest:
path → size, mtime, ctime, hash, mode).
A snapshot is taken before a turn's first change and around every command that may write
(loop/changes.py); a line is written only when something changed, or to mark a turn's start.
Each line names the user prompt (its serial in the session, storage/session.py) whose turn took
it, so /rewind finds "the files before prompt N" by the first snapshot of that turn or a later one.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nanohermes.fileio import make_private_dirs, read_bounded
from nanohermes.storage.blobs import BlobStore, digest
from nanohermes.storage.scan import DEFAULT_LIMITS, SHA, SIZE, WHY, Entry, Limits, Scan, scan

BEFORE = "before"  # before a change: the state a rewind to this turn restores
AFTER = "after"  # after a command, or a write_file/edit_file
REWIND = "rewind"  # the workspace as a rewind found it (a rewind can itself be rewound)
RESTORED = "restored"  # what a rewind left
STARTS = (BEFORE, REWIND)  # kinds whose state is "before this turn's changes"
MAX_INDEX_BYTES = 256 * 2**20  # a 500-step session with a command each writes well under 1 MB


@dataclass(frozen=True)
class Record:
    seq: int
    prompt: int  # serial of the user prompt whose turn took it
    kind: str
    label: str  # the command's program, for "pytest changed 2 files"
    time: float
    paths: frozenset[str]  # whose content differs from the snapshot before
    complete: bool = True


@dataclass(frozen=True)
class Change:
    """What differs between two snapshots, by content (a touch is no change)."""

    created: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    uncovered: dict[str, str] = field(default_factory=dict)  # newly not covered, and why
    note: str = ""  # the scan was incomplete: why

    def __bool__(self) -> bool:
        return bool(self.created or self.changed or self.removed)

    def summary(self) -> str:
        """'changed 2 files, created 1, deleted 1'."""
        said: list[str] = []
        for n, verb in ((len(self.changed), "changed"), (len(self.created), "created"), (len(self.removed), "deleted")):
            if n:
                said.append(f"{verb} {n}" + ("" if said else " file" + ("s" if n != 1 else "")))
        return ", ".join(said) or "changed no files"


def identity(entry: Entry | None):
    """What says two entries hold the same content: the hash, or the stat of an uncovered file."""
    if entry is None:
        return None
    return entry[SHA] or (entry[SIZE], entry[1])


def change_between(old: dict[str, Entry], new: dict[str, Entry], note: str = "") -> Change:
    created = sorted(p for p in new.keys() - old.keys())
    removed = sorted(p for p in old.keys() - new.keys())
    changed = sorted(p for p in new.keys() & old.keys() if identity(new[p]) != identity(old[p]))
    uncovered = {
        p: e[WHY] or "not covered"
        for p, e in new.items()
        if e[SHA] is None and (p not in old or old[p][SHA] is not None or old[p][WHY] != e[WHY])
    }
    return Change(created, changed, removed, uncovered, note)


@dataclass(frozen=True)
class Start:
    """The files as a turn found them, for /rewind."""

    entries: dict[str, Entry]
    complete: bool  # its scan saw every file
    outside: set[str]  # changed since by someone else: a snapshot before a turn found them changed


class Snapshots:
    def __init__(
        self,
        root: Path,
        workspace: Path,
        exclude: Path | None = None,
        limits: Limits = DEFAULT_LIMITS,
        prompt: Callable[[], int] = lambda: 0,
    ):
        """`root`: the session's checkpoints directory; `exclude`: the state directory;
        `prompt()`: the serial of the user prompt whose turn is running."""
        self.root, self.workspace, self.exclude, self.limits = root, Path(workspace).resolve(), exclude, limits
        self.prompt = prompt
        # one index per workspace: a session resumed in another directory must never restore the first one's files
        self.index = root / f"workspace-{digest(str(self.workspace).encode())[:12]}.jsonl"
        self.blobs = BlobStore(root)
        self._records: list[Record] | None = None
        self._deltas: list[tuple[dict, list]] = []
        self._entries: dict[str, Entry] = {}
        self._scanned_ns = 0
        self._complete = True
        self.off = ""  # why snapshots stopped for this session: a scan could not finish within its limits

    # -- taking them ----------------------------------------------------------------------

    def look(self) -> Scan:
        """The workspace now, its new contents stored, nothing recorded."""
        self._load()
        return scan(self.workspace, self.exclude, self._entries, self._scanned_ns, self.blobs, self.limits)

    def checkpoint(self, kind: str, label: str = "", now: Scan | None = None) -> Change:
        """Scan (or take `now`) and record what changed since the last snapshot; a BEFORE or
        REWIND snapshot is recorded as the turn's start even when nothing changed."""
        now, prompt = now or self.look(), self.prompt()
        change = change_between(self._entries, now.entries, now.note)
        records = self._records or []
        starts = kind in STARTS and (not records or records[-1].prompt != prompt)
        delta = {p: e for p, e in now.entries.items() if self._entries.get(p) != e}
        gone = sorted(self._entries.keys() - now.entries.keys())
        if delta or gone or starts or now.complete != self._complete:
            changed = [*change.created, *change.changed, *change.removed] if records else []  # the first: a baseline
            self._record(prompt, kind, label, now, delta, gone, changed)
        self._entries, self._scanned_ns, self._complete = now.entries, now.started_ns, now.complete
        if not now.complete:  # each command would wait out the limit again: stop, and say so once
            self.off = f"{now.note}; workspace checkpoints are off for the rest of this session"
            change = Change(change.created, change.changed, change.removed, change.uncovered, self.off)
        return change

    def _record(self, prompt: int, kind: str, label: str, now: Scan, delta: dict, gone: list, changed: list) -> None:
        seq = len(self._records or []) + 1
        line = {"seq": seq, "prompt": prompt, "kind": kind, "label": label, "time": time.time()}
        line |= {"scanned_ns": now.started_ns, "complete": now.complete, "set": delta, "gone": gone}
        line["changed"] = sorted(changed)  # by content: a touch is in `set`, not here
        make_private_dirs(self.root)
        fd = os.open(self.index, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with open(fd, "a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._remember(line)

    def close(self) -> None:
        self.blobs.close()

    # -- reading them ---------------------------------------------------------------------

    def records(self) -> list[Record]:
        self._load()
        return list(self._records or [])

    def latest(self) -> tuple[dict[str, Entry], bool]:
        """The last snapshot's manifest (what the agent last left), and whether its scan was complete."""
        self._load()
        return dict(self._entries), self._complete

    def start_of(self, prompt: int) -> Start | None:
        """The files before the turn of prompt `prompt` first changed them (its serial, or the
        first later one that has snapshots); None when nothing was recorded since."""
        records = self.records()
        first = next((r for r in records if r.prompt >= prompt), None)
        if first is None:
            return None
        seq = first.seq if first.kind in STARTS else first.seq - 1
        entries, complete = self.manifest_at(seq)
        outside = set().union(*(r.paths for r in records if r.seq > seq and r.kind in STARTS))
        return Start(entries, complete, outside)

    def manifest_at(self, seq: int) -> tuple[dict[str, Entry], bool]:
        entries: dict[str, Entry] = {}
        for delta, gone in self._deltas[:seq]:
            entries.update(delta)
            for path in gone:
                entries.pop(path, None)
        complete = self._records[seq - 1].complete if seq and self._records else True
        return entries, complete

    def touched_since(self, prompt: int) -> set[str]:
        """Every path a snapshot of that turn or a later one saw change (the picker's count)."""
        return set().union(*(r.paths for r in self.records() if r.prompt >= prompt and r.kind != RESTORED))

    # -- files ----------------------------------------------------------------------------

    def _load(self) -> None:
        if self._records is not None:
            return
        self._records = []
        try:
            data = read_bounded(self.index, MAX_INDEX_BYTES)
        except FileNotFoundError:
            return
        whole = data[: data.rfind(b"\n") + 1]  # a line cut by a crash is dropped, and never appended to
        if len(whole) < len(data):
            os.truncate(self.index, len(whole))
        for raw in whole.splitlines():
            try:
                self._remember(json.loads(raw))
            except (ValueError, KeyError, TypeError):
                break  # each line builds on the one before: none after a bad one can be trusted

    def _remember(self, line: dict) -> None:
        delta = {str(p): tuple(e) for p, e in line["set"].items()}
        gone = [str(p) for p in line["gone"]]
        paths = frozenset(str(p) for p in line.get("changed", [*delta, *gone]))
        fields = (int(line["seq"]), int(line["prompt"]), str(line["kind"]), str(line["label"]), float(line["time"]))
        record = Record(*fields, paths, bool(line.get("complete", True)))
        self._records.append(record)
        self._deltas.append((delta, gone))
        self._entries.update(delta)
        for path in gone:
            self._entries.pop(path, None)
        self._scanned_ns, self._complete = int(line["scanned_ns"]), record.complete
