"""Where a model-given path may point, and how results name it.

Small models invent paths, so a missing path is an error that names the closest existing
ones. Paths resolve inside the workspace; NANOHERMES_HOME (sessions, memory, keys in
config) is never reachable through a tool, whatever the configuration says.
"""

from __future__ import annotations

import difflib
import itertools
import os
import re
from pathlib import Path, PurePosixPath

from nanohermes.errors import ToolError
from nanohermes.text import valid_unicode
from nanohermes.tools import ToolContext
from nanohermes.tools.steering import missing_path_note_for
from nanohermes.workspace import in_state_dir, state_dir, walk

MAX_SUGGESTIONS = 5  # enough to contain the right one, few enough to read at a glance
SUGGEST_SCAN_LIMIT = 20_000  # paths looked at for suggestions: keeps a typo's error fast in huge trees
DIR_LISTING_LIMIT = 10  # entries named when a directory is given where a file was expected
# A byte of a file name that is not UTF-8, as results show it (`bad\xffname.txt`, text.py:
# valid_unicode); a model that sends the name back as shown reaches the file.
_SHOWN_BYTE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")


def unshown(raw: str) -> str:
    """A path as results showed it back into the name on disk (`\xff` -> the byte 0xff)."""
    return _SHOWN_BYTE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), raw) if "\\x" in raw else raw


def shown_path(text: str) -> str:
    """A path as results show it: bytes that are not UTF-8 escaped, so text stays valid."""
    return valid_unicode(text)


def resolve_path(ctx: ToolContext, path: str, *, must_exist: bool = True, skill_files: bool = False) -> Path:
    """The real path a tool may touch, or a ToolError that says why not. `skill_files`: a read may
    also reach the files of an installed skill's folder (its SKILL.md names them: `forms.md`,
    `scripts/fill.py`), wherever the skill is installed; nothing under it may lead out of it."""
    raw = (path or "").strip()
    if not raw:
        raise ToolError("path is empty; give a path relative to the workspace")
    if shown_path(raw) != raw:  # a lone surrogate the model escaped in JSON (\udcff) is no character
        raise ToolError(
            f"{shown_path(raw)!r} holds a lone surrogate code point, which is not a character; "
            "name a byte that is not UTF-8 as \\xNN, the way results show such names"
        )
    workspace = ctx.workspace.resolve()
    if "\\x" in raw and not os.path.lexists(workspace / os.path.expanduser(raw)):
        raw = unshown(raw)  # a name shown escaped, sent back as shown
    candidate = Path(os.path.expanduser(raw))
    if not candidate.is_absolute():
        candidate = workspace / candidate
    lexical = Path(os.path.normpath(candidate))
    try:
        resolved = candidate.resolve()  # follows every symlink on the way
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise ToolError(f"cannot resolve {shown_path(raw)}: {exc}") from None
    if skill_files and (folder := _skill_folder(ctx, lexical, resolved)) is not None:
        if must_exist and not os.path.lexists(resolved):
            raise ToolError(f"{shown_path(raw)} does not exist in the skill's folder {folder}")
        return resolved
    if in_state_dir(lexical, ctx.home, workspace) or in_state_dir(resolved, ctx.home, workspace):
        raise ToolError(
            f"{shown_path(raw)} is inside NanoHermes' own state directory ({ctx.home.resolve()}); "
            "tools never read or write it"
        )
    if not ctx.allow_outside_workspace:
        if not lexical.is_relative_to(workspace):
            raise ToolError(f"{shown_path(raw)} is outside the workspace {workspace}; use a path inside it")
        if not resolved.is_relative_to(workspace):
            raise ToolError(
                f"{shown_path(raw)} is a symlink to {shown_path(str(resolved))}, outside the workspace; refused"
            )
    if must_exist and not os.path.lexists(resolved):
        raise missing_path_error(ctx, raw, lexical)
    return resolved


def _skill_folder(ctx: ToolContext, lexical: Path, resolved: Path) -> Path | None:
    """The folder of an installed skill that holds `lexical`, its real place too (a link inside a
    skill's folder leads nowhere else), else None."""
    if ctx.skills is None:
        return None
    for folder in ctx.skills.folders():
        if lexical.is_relative_to(folder) and resolved.is_relative_to(folder.resolve()):
            return folder
    return None


def display_path(ctx: ToolContext, path: Path) -> str:
    """How results name a path: relative to the workspace, absolute only outside it."""
    workspace = ctx.workspace.resolve()
    if path == workspace:
        return "."
    if path.is_relative_to(workspace):
        return shown_path(path.relative_to(workspace).as_posix())
    return shown_path(str(path))


def missing_path_error(ctx: ToolContext, raw: str, target: Path) -> ToolError:
    """The error names the closest paths, then what the workspace holds (tools/steering.py)."""
    found = closest_paths(ctx, target)
    hint = f" Closest existing paths: {', '.join(found)}." if found else ""
    return ToolError(
        f"{shown_path(raw)} does not exist.{hint} {missing_path_note_for(ctx, raw) or 'Use glob to find files.'}"
    )


def closest_paths(ctx: ToolContext, target: Path, limit: int = MAX_SUGGESTIONS) -> list[str]:
    """Existing workspace paths a model most likely meant: same file name elsewhere first,
    then similar paths, similar names, and similar entries of the nearest existing parent."""
    workspace = ctx.workspace.resolve()
    want = target.relative_to(workspace).as_posix() if target.is_relative_to(workspace) else target.name
    name = PurePosixPath(want).name
    known = [
        _shown(rel, entry)
        for rel, entry in itertools.islice(
            walk(workspace, workspace, include_dirs=True, exclude=state_dir(ctx.home)), SUGGEST_SCAN_LIMIT
        )
    ]
    by_name: dict[str, list[str]] = {}
    for shown in known:
        by_name.setdefault(PurePosixPath(shown).name, []).append(shown)
    same_name = sorted(by_name.get(name, []), key=lambda p: -difflib.SequenceMatcher(None, want, p).ratio())
    similar_paths = difflib.get_close_matches(want, known, n=limit, cutoff=0.6)
    similar_names = [p for n in difflib.get_close_matches(name, list(by_name), n=limit, cutoff=0.7) for p in by_name[n]]
    ordered = same_name + similar_paths + similar_names + _similar_in_parent(workspace, target)
    return list(dict.fromkeys(ordered))[:limit]


def _similar_in_parent(workspace: Path, target: Path) -> list[str]:
    """`src/utls/x.py` → entries of `src` that look like `utls`."""
    missing = target
    while not missing.parent.exists() and missing.parent.is_relative_to(workspace) and missing.parent != missing:
        missing = missing.parent
    parent = missing.parent
    if not parent.is_relative_to(workspace) or not parent.is_dir():
        return []
    try:
        entries = {e.name: e for e in os.scandir(parent)}
    except OSError:
        return []
    close = difflib.get_close_matches(missing.name, list(entries), n=MAX_SUGGESTIONS, cutoff=0.5)
    prefix = "" if parent == workspace else parent.relative_to(workspace).as_posix() + "/"
    return [_shown(prefix + n, entries[n]) for n in close]


def _shown(rel: str, entry: os.DirEntry) -> str:
    return shown_path(rel + "/" if entry.is_dir(follow_symlinks=False) else rel)


def list_directory(path: Path, limit: int = DIR_LISTING_LIMIT) -> tuple[list[str], int]:
    """A few sorted entries of a directory (dirs end in /) and how many there are."""
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        return [], 0
    return [_shown(e.name, e) for e in entries[:limit]], len(entries)
