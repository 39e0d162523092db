"""Forking a session (`/fork`, `--fork`): a new session that starts where another stands, the
original left as it was, still resumable.

The new file is the original's events (its closing stats left out) under a new meta line
naming the session it came from; the workspace snapshots, checkpoints and the images the session
sent are copied too, the blobs hard-linked (they never change), so /rewind in the fork reaches back
past the fork and its images are sent again.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import time
from pathlib import Path

from nanohermes.errors import SessionError
from nanohermes.fileio import make_private_dirs, open_regular
from nanohermes.storage.session import FORMAT_VERSION, check_name, generate_name, sessions_dir

_META = b'{"type":"meta"'
_STATS = b'{"type":"stats"'


def fork_session(home: Path, source: str, name: str | None = None) -> str:
    """A new session copied from `source`; its name (`name`, or a generated one). SessionError
    when the source is missing or the name taken."""
    folder = sessions_dir(home)
    src = folder / f"{check_name(source)}.jsonl"
    name = check_name(name) if name else generate_name()
    dst = folder / f"{name}.jsonl"
    try:
        out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise SessionError(f"A session named {name!r} exists already; pick another name.") from None
    try:
        with open_regular(src) as f, os.fdopen(out, "wb") as w:
            _copy_events(f, w, source)
        _copy_checkpoints(home / "checkpoints" / source, home / "checkpoints" / name)
    except FileNotFoundError:
        dst.unlink(missing_ok=True)
        raise SessionError(f"No session named {source!r} to fork; `nanohermes sessions --all` lists them.") from None
    except OSError as exc:
        dst.unlink(missing_ok=True)
        shutil.rmtree(home / "checkpoints" / name, ignore_errors=True)
        raise SessionError(f"Cannot fork session {source!r}: {exc.strerror or exc}.") from None
    return name


def _copy_events(f, w, source: str) -> None:
    meta = {"type": "meta", "version": FORMAT_VERSION, "created": time.time(), "forked_from": source}
    first = f.readline()
    if first.startswith(_META) and first.endswith(b"\n"):
        old = json.loads(first)
        meta |= {"workspace": old["workspace"]} if isinstance(old.get("workspace"), str) else {}
        first = b""
    w.write(json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    for raw in itertools.chain([first] if first else [], f):
        if not raw.endswith(b"\n"):  # a line the source's writer has not finished
            break
        if not raw.startswith(_STATS):
            w.write(raw)


def _indexes(folder, names) -> list[str]:
    """The pack index is copied after the tree is linked (copytree would link it)."""
    return [n for n in names if n.endswith(".idx")]


def _copy_checkpoints(src: Path, dst: Path) -> None:
    """Index files copied (each session appends to its own), blobs and packs linked (or copied
    across devices): a loose blob never changes, and a pack is appended to only by the process
    that created it, past what any index names."""
    if not src.is_dir():
        return

    def link_or_copy(a, b):
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    make_private_dirs(dst.parent)
    dst.mkdir(mode=0o700)
    for entry in os.scandir(src):
        if entry.is_dir(follow_symlinks=False) and entry.name in (
            "blobs",
            "packs",
            "images",
        ):  # images: storage/images.py
            shutil.copytree(entry.path, dst / entry.name, copy_function=link_or_copy, ignore=_indexes)
            for index in _indexes(entry.path, os.listdir(entry.path)):
                shutil.copy2(os.path.join(entry.path, index), dst / entry.name / index)
        elif entry.is_file(follow_symlinks=False):
            shutil.copy2(entry.path, dst / entry.name)
