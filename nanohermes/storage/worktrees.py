"""Helpers' git worktrees: `$NANOHERMES_HOME/worktrees/SESSION/taskN`, each made with `git worktree
add --detach` from a commit that holds the workspace as it is now — HEAD with the uncommitted and
untracked changes (what .gitignore leaves out stays out) — so a helper starts from what its parent
sees, not from the last commit. That commit is written with a private index (the user's index and
branches are untouched; its objects are unreachable, as `git stash create`'s are, and git's gc
drops them in time).

NanoHermes runs git here for itself, as the user (sandbox/actors.py: the user's actor, its
bookkeeping, never a model's command). The helper never commits: its changes are read back
(`changes`) as the files that differ between the base and a tree of the worktree written with
another private index, untracked files included.

A session holds a lock on its folder while it lives; `prune_leftovers` removes the folders no
live session holds (a crashed session's) and has git forget their worktrees.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from nanohermes.errors import NanoHermesError
from nanohermes.storage.locking import FileLock, LockTimeout
from nanohermes.workspace import WORKTREES_DIR

GIT_TIMEOUT_S = 300  # `git add -A` over a big repository's uncommitted files; past this git is hung
MAX_CHANGED_FILES = 1_000  # files a helper changed that are read back; more is a generated tree, said
MAX_FILE_BYTES = 4_194_304  # a changed file read back whole (the file tools' limit); a bigger one is said
LOCK_NAME = ".lock"
# commit-tree needs an author; the user's may be unset, and this commit is NanoHermes's, never on a branch
IDENTITY = {
    "GIT_AUTHOR_NAME": "NanoHermes",
    "GIT_AUTHOR_EMAIL": "nanohermes@localhost",
    "GIT_COMMITTER_NAME": "NanoHermes",
    "GIT_COMMITTER_EMAIL": "nanohermes@localhost",
}
REGULAR, EXECUTABLE = "100644", "100755"
NO_FILE = "000000"


class WorktreeError(NanoHermesError):
    """A worktree cannot be made or read here; the message says why (not a repository, no commit, git failed)."""


@dataclass(frozen=True)
class Repository:
    top: Path  # the working tree's top level
    prefix: str  # the workspace under it, "" or "sub/dir/" (git's --show-prefix)

    @classmethod
    def of(cls, workspace: Path) -> Repository:
        """The repository the workspace is in; WorktreeError saying why there is none."""
        if shutil.which("git") is None:
            raise WorktreeError("git is not installed, so a helper cannot have a worktree of its own")
        try:
            out = _git(["rev-parse", "--show-toplevel", "--show-prefix"], workspace).decode().splitlines()
        except WorktreeError:
            raise WorktreeError(
                f"{workspace} is not in a git repository, so a helper cannot have a worktree of its own: "
                "call task without isolation (it then works in the workspace itself, one helper at a time)"
            ) from None
        try:
            _git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], workspace)
        except WorktreeError:
            raise WorktreeError(
                "the repository has no commit yet, and a worktree starts from one: commit once, "
                "or call task without isolation"
            ) from None
        return cls(Path(out[0]).resolve(), out[1] if len(out) > 1 else "")


@dataclass(frozen=True)
class FileChange:
    """One file a helper changed, relative to the workspace: its content in the base and now
    (None: absent), or `note` when it is not a file that can be written back (a link, a submodule,
    too big)."""

    path: str
    before: bytes | None
    after: bytes | None
    executable: bool = False
    note: str = ""


@dataclass(frozen=True)
class Worktree:
    name: str
    top: Path  # the worktree's top level
    workspace: Path  # the helper's workspace: the same place in it as the parent's in the repository
    base: str  # the commit it started from
    repository: Repository


class Worktrees:
    """One session's helper worktrees; its folder and lock are made with the first."""

    def __init__(self, home: Path, session_name: str):
        self.folder = Path(home) / WORKTREES_DIR / session_name
        self._lock: FileLock | None = None
        self._guard = threading.Lock()  # helpers start side by side: one folder and lock, one `live` for all
        self.live: dict[str, Worktree] = {}

    def add(self, name: str, workspace: Path) -> Worktree:
        """A worktree of `workspace`'s repository as the workspace is now; WorktreeError when none can be made."""
        repository = Repository.of(workspace)
        with self._guard:
            self._hold()
        # Side by side with other helpers' (git makes each worktree's own directory with one mkdir; its
        # objects are written by rename): each helper's start costs a checkout, ~0.3 s for 300 files.
        base = _workspace_commit(repository.top, self.folder / f"{name}.base-index")
        top = self.folder / name
        _git(["worktree", "add", "--detach", "--quiet", str(top), base], repository.top)
        worktree = Worktree(name, top.resolve(), top.resolve() / repository.prefix, base, repository)
        with self._guard:
            self.live[name] = worktree
        return worktree

    def changes(self, worktree: Worktree) -> tuple[list[FileChange], str]:
        """What the helper changed under its workspace, and `git diff`'s text of it."""
        after = _tree_of(worktree.top, self.folder / f"{worktree.name}.index")
        where = worktree.workspace
        plain = ["diff", "--no-renames", "--relative", "--no-ext-diff", "--no-textconv", "--no-color"]
        changes = _read_changes(_git([*plain, "--raw", "-z", "--no-abbrev", worktree.base, after], where), where)
        text = _git([*plain, worktree.base, after], where)
        return changes, text.decode("utf-8", "replace")

    def remove(self, worktree: Worktree) -> None:
        """The worktree gone, and git told; never raises (the folder goes at the session's end anyway)."""
        with self._guard:
            self.live.pop(worktree.name, None)
        _forget(worktree.top, worktree.repository.top)
        for leftover in (f"{worktree.name}.index", f"{worktree.name}.base-index"):
            (self.folder / leftover).unlink(missing_ok=True)

    def close(self) -> None:
        """Every worktree removed, then the folder, then the lock."""
        for worktree in list(self.live.values()):
            self.remove(worktree)
        if self._lock is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self._lock.release()
            self._lock = None

    def _hold(self) -> None:
        if self._lock is None:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            lock = FileLock(self.folder / LOCK_NAME)
            lock.acquire(timeout=0)  # the session's own lock already keeps another process from this name
            self._lock = lock


def prune_leftovers(home: Path) -> list[str]:
    """Remove the worktree folders no live session holds (a crashed session's), each worktree
    forgotten by its repository; the folders removed. One stat when there are none."""
    root = Path(home) / WORKTREES_DIR
    try:
        folders = [entry for entry in os.scandir(root) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    removed = []
    for entry in folders:
        lock = FileLock(Path(entry.path) / LOCK_NAME)
        try:
            lock.acquire(timeout=0)
        except (LockTimeout, OSError):
            continue  # a live session's
        try:
            for worktree in Path(entry.path).iterdir():
                if worktree.is_dir() and not worktree.is_symlink():
                    _forget(worktree, _repository_of(worktree))
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.name)
        finally:
            lock.release()
    return removed


# ---------------------------------------------------------------- git


def _git(args: list[str], cwd: Path, env: dict | None = None) -> bytes:
    """git's output; WorktreeError with its last line of errors when it fails."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env={**os.environ, **(env or {}), "GIT_TERMINAL_PROMPT": "0"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WorktreeError(f"git {args[0]} did not finish: {exc}") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise WorktreeError(f"git {args[0]} failed: {said[-1] if said else f'exit {done.returncode}'}")
    return done.stdout


def _tree_of(top: Path, index: Path) -> str:
    """A tree of the working tree at `top` as it is, untracked files included: written with a private
    copy of its index (stat data reused: only what changed is read)."""
    own = top / _git(["rev-parse", "--git-path", "index"], top).decode().strip()  # relative, or absolute
    index.unlink(missing_ok=True)
    if own.is_file():
        shutil.copyfile(own, index)
    private = {"GIT_INDEX_FILE": str(index)}
    try:
        _git(["add", "--all", "--", "."], top, private)
        return _git(["write-tree"], top, private).decode().strip()
    finally:
        index.unlink(missing_ok=True)


def _workspace_commit(top: Path, index: Path) -> str:
    """HEAD when the working tree is HEAD's, else a commit over HEAD holding it as it is."""
    tree = _tree_of(top, index)
    if tree == _git(["rev-parse", "HEAD^{tree}"], top).decode().strip():
        return _git(["rev-parse", "HEAD"], top).decode().strip()
    message = ["-m", "NanoHermes: the workspace as a helper started (uncommitted changes included)"]
    return _git(["commit-tree", tree, "-p", "HEAD", *message], top, IDENTITY).decode().strip()


def _read_changes(raw: bytes, where: Path) -> list[FileChange]:
    """`git diff --raw -z`'s entries as FileChanges, contents read back within the caps."""
    fields = raw.split(b"\0")
    changes: list[FileChange] = []
    for i in range(0, len(fields) - 1, 2):
        if len(changes) == MAX_CHANGED_FILES:
            changes.append(FileChange("…", None, None, note=f"more than {MAX_CHANGED_FILES} files changed: not read"))
            break
        old_mode, new_mode, old_sha, new_sha, _status = fields[i].decode().lstrip(":").split(" ")
        path = os.fsdecode(fields[i + 1])
        changes.append(_change(path, old_mode, new_mode, old_sha, new_sha, where))
    return changes


def _change(path: str, old_mode: str, new_mode: str, old_sha: str, new_sha: str, where: Path) -> FileChange:
    files = (REGULAR, EXECUTABLE, NO_FILE)
    if old_mode not in files or new_mode not in files:
        return FileChange(path, None, None, note="a symbolic link or submodule: not written back")
    try:
        before = None if old_mode == NO_FILE else _blob(old_sha, where)
        after = None if new_mode == NO_FILE else _blob(new_sha, where)
    except _TooBig as big:
        return FileChange(path, None, None, note=f"{big} bytes, over the {MAX_FILE_BYTES:,}-byte limit")
    return FileChange(path, before, after, new_mode == EXECUTABLE)


class _TooBig(Exception):
    pass


def _blob(sha: str, where: Path) -> bytes:
    size = int(_git(["cat-file", "-s", sha], where))
    if size > MAX_FILE_BYTES:
        raise _TooBig(size)
    return _git(["cat-file", "blob", sha], where)


def _repository_of(worktree: Path) -> Path | None:
    """The repository a worktree's `.git` pointer names (its common git directory), or None."""
    try:
        pointer = (worktree / ".git").read_text(errors="replace").strip()
    except OSError:
        return None
    if not pointer.startswith("gitdir:"):
        return None
    gitdir = (worktree / pointer[len("gitdir:") :].strip()).resolve()
    return gitdir.parent.parent  # <repo>/.git/worktrees/NAME -> <repo>/.git


def _forget(top: Path, repository: Path | None) -> None:
    """The worktree's files removed and its repository's record of it pruned."""
    shutil.rmtree(top, ignore_errors=True)
    if repository is not None and repository.exists():
        try:
            _git(["worktree", "prune"], repository)
        except WorktreeError:
            pass  # git prunes a missing worktree's record itself, in time
