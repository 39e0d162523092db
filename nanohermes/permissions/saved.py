"""The "always" answers of one project: `$NANOHERMES_HOME/permissions/<hash of the workspace>.json`.

Kept under the state directory, never in the repository (a repository cannot grant itself
anything, and commands in the sandbox cannot write the state directory), keyed by the
workspace's resolved path, which the file also holds: a hash shared by two paths is noticed.
They are in force for every session of the project: `-c`, `--session`, `/resume`, `/reset` and
a restart. Written like memory.json: under a file lock, read-modify-write (two sessions of one
project both keep theirs), then an atomic replace. A file that is not what it should be is
left untouched: its grants are not in force, and a new "always" lasts for the session only.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from nanohermes.errors import NanoHermesError
from nanohermes.fileio import read_regular
from nanohermes.permissions.grants import KINDS, Grant
from nanohermes.storage.locking import FileLock, holding, replace_atomically

FILE_VERSION = 1
LOCK_TIMEOUT = 5.0  # seconds to wait for another session of this project saving its answer
MAX_FILE_BYTES = 2_000_000  # thousands of grants; more is not a file NanoHermes wrote
KEY_CHARS = 16  # of the workspace path's sha256: a collision is also caught by the path inside


class SavedGrantsError(NanoHermesError):
    """The project's grants file is corrupt, locked or unwritable; the message says which."""


def saved_grants_path(home: Path, workspace: Path) -> Path:
    key = hashlib.sha256(str(workspace).encode("utf-8", "surrogateescape")).hexdigest()[:KEY_CHARS]
    return Path(home) / "permissions" / f"{key}.json"


def parse_saved(raw: bytes, path: Path, workspace: Path) -> list[Grant]:
    """The grants in a file's bytes, or SavedGrantsError (the caller never overwrites it)."""
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("grants"), list):
            raise ValueError("expected an object with a 'grants' list")
        if data.get("version", FILE_VERSION) != FILE_VERSION:
            raise ValueError(f"version {data.get('version')!r} is not one this NanoHermes understands")
        if data.get("workspace") != str(workspace):
            raise ValueError(f"it belongs to {data.get('workspace')!r}, not this workspace")
        return [_grant(item) for item in data["grants"]]
    except (UnicodeDecodeError, ValueError) as exc:
        raise SavedGrantsError(
            f"{path} is corrupt ({exc}). It was left untouched and its answers are not in force; fix it or "
            'move it aside. New "always" answers last for this session only.'
        ) from None


def _grant(item) -> Grant:
    if not isinstance(item, dict) or item.get("kind") not in KINDS:
        raise ValueError(f"{item!r} is not a grant")
    scope, unsandboxed = item.get("scope"), item.get("unsandboxed", False)
    if not isinstance(scope, str) or not scope.strip() or not isinstance(unsandboxed, bool):
        raise ValueError(f"{item!r} is not a grant")
    return Grant(item["kind"], scope, unsandboxed)


def _stored(grant: Grant) -> dict:
    item = {"kind": grant.kind, "scope": grant.scope}
    return {**item, "unsandboxed": True} if grant.unsandboxed else item


class SavedGrants:
    """One project's saved answers; `problem` says why none are in force (a corrupt file)."""

    def __init__(self, home: Path, workspace: Path):
        self.workspace = Path(workspace)
        self.path = saved_grants_path(home, self.workspace)
        self.problem: str | None = None
        self._lock = FileLock(f"{self.path}.lock")
        self._cache_key: tuple | None = None
        self._grants: list[Grant] = []

    def grants(self) -> list[Grant]:
        """In force now (a change saved by another session of the project included)."""
        try:
            return list(self._load())
        except SavedGrantsError as exc:
            self.problem = str(exc)
            return []

    def add(self, grant: Grant) -> None:
        with self._locked():
            grants = self._load()
            if grant not in grants:
                self._save([*grants, grant])

    def remove(self, grant: Grant) -> None:
        with self._locked():
            self._save([g for g in self._load() if g != grant])

    def clear(self) -> None:
        with self._locked():
            self._load()  # a corrupt file is not replaced by an empty one
            self._save([])

    def _load(self) -> list[Grant]:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._cache_key, self._grants = None, []
            return self._grants
        except OSError as exc:
            raise SavedGrantsError(f"cannot read {self.path}: {exc.strerror}") from None
        key = (st.st_ino, st.st_mtime_ns, st.st_size)
        if key != self._cache_key:
            try:
                raw = read_regular(self.path, MAX_FILE_BYTES + 1)
            except OSError as exc:  # a FIFO or a device put there: not read, never blocked on
                raise SavedGrantsError(f"cannot read {self.path}: {exc.strerror or exc}") from None
            if len(raw) > MAX_FILE_BYTES:
                raise SavedGrantsError(f"{self.path} is over {MAX_FILE_BYTES:,} bytes; it was left untouched")
            self._grants, self._cache_key = parse_saved(raw, self.path, self.workspace), key
        self.problem = None
        return self._grants

    def _save(self, grants: list[Grant]) -> None:
        data = {"version": FILE_VERSION, "workspace": str(self.workspace), "grants": [_stored(g) for g in grants]}
        payload = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
        replace_atomically(self.path, payload.encode("utf-8"), ".grants.", SavedGrantsError)
        self._cache_key = None  # read back on next use: the file is the truth

    def _locked(self):
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise SavedGrantsError(f"cannot create {self.path.parent}: {exc.strerror}") from None
        return holding(self._lock, LOCK_TIMEOUT, SavedGrantsError, self.path)
