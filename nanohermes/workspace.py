"""The workspace's files: the one .gitignore-aware walk, rg's file listing, and the sorted listing.

Every tool that looks at "the files" sees the same ones: what .gitignore files leave in (the
deepest with an opinion decides, as in git), never .git, never NanoHermes' own state directory
(`state_dir`), symlinks not followed. rg lists them fastest; `walk` lists the same files where
rg is missing or fails.

`list_workspace` is the sorted, capped listing that the workspace overview (prompt/overview.py)
and the notes that steer an empty search or a missing path (tools/steering.py) describe the
workspace from. It is deterministic (sorted by path), so an overview built from it is
byte-stable for an unchanged tree, and it stops at SCAN_LIMIT files, so a workspace that is a
whole home directory costs a fraction of a second, not a full walk.

It stands beside the parts that read the workspace (tools/, prompt/, storage/'s snapshots), below
each of them, and imports none of them.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nanohermes.fileio import read_regular

if TYPE_CHECKING:
    import pathspec

SCAN_LIMIT = 5_000  # files looked at: more than a person's project holds; a home directory stops here
ALWAYS_SKIPPED = frozenset({".git"})  # git's own database: never source, often huge
WORKTREES_DIR = "worktrees"  # under the state directory: helpers' git worktrees (storage/worktrees.py)
BINARY_SNIFF_BYTES = 8_192  # the window git and ripgrep look at for a NUL byte
# rg blocks for ever on an ignore file that is a FIFO (it opens every .gitignore it finds):
# one at the root or above is seen before rg starts (blocking_ignore_file); past this deadline
# (one deeper down) the listing is left to the walk, which never blocks on one.
RG_LIST_TIMEOUT_S = 30.0
IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")  # what rg reads in a directory and in its parents

Rules = tuple[tuple[str, "pathspec.GitIgnoreSpec"], ...]  # (directory prefix, its .gitignore)


def state_dir(home: Path) -> Path:
    """NanoHermes' home (ToolContext.home), which no tool may show, also when it lies inside the workspace."""
    return home.resolve()


def in_state_dir(path: Path, home: Path, workspace: Path) -> bool:
    """Whether `path` (absolute, normalised or resolved) lies in the state directory, which no tool
    may show — but for a helper's own worktree (storage/worktrees.py), kept there and its workspace."""
    home = state_dir(home)
    if not path.is_relative_to(home):
        return False
    workspace = workspace.resolve()
    return not (workspace.is_relative_to(home / WORKTREES_DIR) and path.is_relative_to(workspace))


# ---------------------------------------------------------------- rg


@functools.cache
def find_rg() -> str | None:
    """The pinned rg the `ripgrep` wheel put beside our python (its bin may not be on PATH), else any rg."""
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


def excluded_prefix(exclude: Path | None, base: Path) -> str | None:
    """The state directory relative to base (as rg names paths), when it lies inside."""
    if exclude is None or exclude == base or not exclude.is_relative_to(base):
        return None
    return exclude.relative_to(base).as_posix()


def exclusion_args(exclude: Path | None, base: Path) -> list[str]:
    """rg's arguments that leave the state directory out: anchored (only that directory) and
    matched literally."""
    hidden = excluded_prefix(exclude, base)
    return ["-g", "!/" + glob_literal(hidden)] if hidden else []


_GLOB_SPECIAL = re.compile(r"([*?\[\]{}\\!])")


def glob_literal(path: str) -> str:
    """A path as an rg glob that matches it and only it: `ws/[s]tate` must not match `ws/state`."""
    return _GLOB_SPECIAL.sub(r"\\\1", path)


def blocking_ignore_file(root: Path) -> Path | None:
    """An ignore file rg would open at `root` or above it that is not a regular file (a FIFO
    would keep it waiting for ever), else None. A few stats: no waiting out RG_LIST_TIMEOUT_S."""
    candidates = [directory / name for directory in (root, *root.parents) for name in IGNORE_FILES]
    for path in [*candidates, root / ".git" / "info" / "exclude"]:
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return path
        except OSError:
            continue
    return None


def rg_files(
    rg: str, root: Path, exclude: Path | None, limit: int | None = None, timeout: float = RG_LIST_TIMEOUT_S
) -> list[str] | None:
    """Every file under root that is not ignored, relative to root, from `rg --files` (the same
    rules as the walk, faster). With a `limit`, sorted by path (single-threaded, so the first
    `limit` files are always the same ones) and read until limit + 1 files. None when rg cannot
    answer within `timeout` seconds, or would block on an ignore file (the caller walks instead)."""
    if blocking_ignore_file(root) is not None:
        return None
    args = [rg, "--files", *(["--sort", "path"] if limit is not None else [])]
    args += ["--no-config", "--no-messages", "--hidden", "--no-require-git", "-g", "!.git"]
    args += exclusion_args(exclude, root)
    hidden = excluded_prefix(exclude, root)
    files: list[str] = []
    fired: list[bool] = []
    try:
        with subprocess.Popen(
            args, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        ) as proc:
            deadline = threading.Timer(timeout, lambda: (fired.append(True), proc.kill()))
            deadline.start()
            try:
                for line in proc.stdout:
                    name = os.fsdecode(line.rstrip(b"\n"))
                    if hidden and (name == hidden or name.startswith(hidden + "/")):
                        continue  # the state directory, should rg's glob ever let it through
                    files.append(name)
                    if limit is not None and len(files) > limit:
                        proc.kill()
                        break
                code = proc.wait()
            finally:
                deadline.cancel()
    except OSError:
        return None
    complete = limit is None or len(files) <= limit
    if fired or (complete and code not in (0, 1)):  # 1: no files at all
        return None
    return files


# ---------------------------------------------------------------- the sorted listing


@dataclass(frozen=True)
class Listing:
    files: tuple[str, ...]  # workspace-relative POSIX paths, sorted
    complete: bool = True  # False: the scan stopped at SCAN_LIMIT, there are more

    def __len__(self) -> int:
        return len(self.files)

    def under(self, prefix: str) -> list[str]:
        """The files below a workspace-relative directory ("" or "." is the whole workspace)."""
        if prefix in ("", "."):
            return list(self.files)
        prefix = prefix.rstrip("/") + "/"
        return [f for f in self.files if f.startswith(prefix)]


def list_workspace(workspace: Path, exclude: Path | None = None, limit: int = SCAN_LIMIT) -> Listing:
    """The workspace's files (not .gitignored, not in .git, not under `exclude`: NanoHermes'
    home), at most `limit`, with rg when it is installed (three times faster), else the walk."""
    root = Path(workspace).resolve()
    rg = find_rg()
    listed = rg_files(rg, root, exclude, limit) if rg else None
    if listed is None:
        listed = [rel for rel, _ in itertools.islice(walk(root, root, exclude=exclude), limit + 1)]
    files = sorted(p.replace(os.sep, "/") for p in listed)
    return Listing(tuple(files[:limit]), complete=len(files) <= limit)


# ---------------------------------------------------------------- the walk


def walk(
    root: Path, base: Path, *, include_dirs: bool = False, exclude: Path | None = None
) -> Iterator[tuple[str, os.DirEntry]]:
    """Yield (path relative to base, entry) for files under root, sorted, depth first.

    Honours every .gitignore from base down (deeper files override shallower, as in git),
    always skips .git and the `exclude` directory (NanoHermes' own state), and does not
    follow symlinks (as ripgrep). `base` is the workspace (or root itself when root lies
    outside it)."""
    excluded = str(exclude) if exclude is not None else None
    cut = len(os.path.join(base, ""))  # string slicing: Path.relative_to per entry would double the walk time
    stack = [_open_dir(root, base, _rules_down_to(base, root))]
    while stack:
        entries, rules = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        rel = entry.path[cut:]
        is_dir = entry.is_dir(follow_symlinks=False)
        if entry.name in ALWAYS_SKIPPED or entry.is_symlink() or _ignored(rules, rel, is_dir):
            continue
        if is_dir and entry.path == excluded:
            continue
        if is_dir:
            if include_dirs:
                yield rel, entry
            stack.append(_open_dir(entry.path, base, rules))
        elif entry.is_file(follow_symlinks=False):
            yield rel, entry


def is_ignored(workspace: Path, rel: str) -> bool:
    """Whether the walk leaves out `rel` (a workspace-relative path): .gitignore (a file's own rule,
    or one of a directory it is in), or .git."""
    base = Path(workspace).resolve()
    parts = [part for part in rel.split("/") if part not in ("", ".")]
    rules: Rules = ()
    directory = base
    for i, part in enumerate(parts):
        rules = _with_gitignore(rules, directory, base)
        if part in ALWAYS_SKIPPED or _ignored(rules, "/".join(parts[: i + 1]), i < len(parts) - 1):
            return True
        directory = directory / part
    return False


def _open_dir(directory: Path | str, base: Path, rules: Rules) -> tuple[Iterator[os.DirEntry], Rules]:
    """Sorted entries of directory and the rules that apply inside it."""
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:  # unreadable or vanished: skip it, like rg
        entries = []
    return iter(entries), _with_gitignore(rules, directory, base)


def _rules_down_to(base: Path, root: Path) -> Rules:
    """Rules from the .gitignore files of base and every directory between it and root."""
    rules: Rules = ()
    directory = base
    for part in root.relative_to(base).parts:
        rules = _with_gitignore(rules, directory, base)
        directory = directory / part
    return rules


def _with_gitignore(rules: Rules, directory: Path | str, base: Path) -> Rules:
    try:  # a .gitignore that is a FIFO must not hang the walk
        lines = read_regular(os.path.join(directory, ".gitignore")).decode("utf-8", "replace").splitlines()
    except OSError:
        return rules
    rel = os.path.relpath(directory, base)
    prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
    import pathspec  # ~9 ms; only walks need it

    return rules + ((prefix, pathspec.GitIgnoreSpec.from_lines(lines)),)


def _ignored(rules: Rules, rel: str, is_dir: bool) -> bool:
    """The deepest .gitignore with an opinion decides, as in git."""
    for prefix, spec in reversed(rules):
        verdict = spec.check_file(rel[len(prefix) :] + ("/" if is_dir else "")).include
        if verdict is not None:
            return verdict
    return False
