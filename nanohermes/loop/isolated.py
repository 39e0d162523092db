"""A helper in a git worktree of its own (`task` with isolation = "worktree", loop/subagents.py):
where it works, how it reaches the loop's thread, and what its parent is told of its changes.

- Where: a worktree of the workspace as it is now (storage/worktrees.py), under the state
  directory; its sandbox the session's moved there (sandbox/actors.py: helper_policy), so its
  commands may write the worktree and a temp dir of its own, and nothing of the user's — the
  workspace and its `.git` are read-only to it like the rest of the disk.
- Its own edits ask nothing in `ask` mode (it works as in `accept-edits`, inside its worktree):
  nothing of the user's changes until its diff is brought in, which asks (loop/applying.py).
- Several run side by side on threads of their own (loop/together.py): every event, question and
  warning of theirs is handed to the loop's thread (ToolContext.on_loop), so the front ends see
  them one at a time; once the loop stops waiting (Ctrl-C), a helper's next event stops it as
  Ctrl-C would.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nanohermes.errors import ToolError
from nanohermes.events import TurnResult
from nanohermes.loop.applying import CONFLICT, Outcome
from nanohermes.loop.together import STOPPED
from nanohermes.sandbox.actors import helper_policy
from nanohermes.sandbox.policy import Policy, git_dirs_of
from nanohermes.storage.worktrees import FileChange, Worktree, Worktrees

WORKTREE_BRIEF = (
    "[You work in a git worktree made for you, a copy of the workspace as it is now (uncommitted changes "
    "included): {path}. Relative paths resolve there. What .gitignore leaves out (virtual environments, "
    "node_modules, builds) was not copied: the originals are under {original}, read-only. Do not commit: "
    "the files you change go back to the other agent as a diff.]"
)
DIFF_FOR_PARENT_CHARS = 6_000  # the diff in the parent's result (~1,500 tokens): files not brought in first
FILE_START = re.compile(r"(?m)^(?=diff --git )")  # where each file's part of `git diff` begins


@dataclass(frozen=True)
class Place:
    """Where a worktree helper works, and how it reaches the loop's thread."""

    worktree: Worktree
    sandbox: Policy | None  # the session's policy moved to the worktree (None: the sandbox is off)
    on_loop: Callable[[Callable[[], object]], object]

    @property
    def workspace(self) -> Path:
        return self.worktree.workspace

    def relayed(self, fn: Callable) -> Callable:
        """`fn` run on the loop's thread; a stopped loop (Ctrl-C) stops the helper as Ctrl-C would."""

        def on_loop(*args):
            try:
                return self.on_loop(lambda: fn(*args))
            except ToolError as exc:
                if str(exc) != STOPPED:
                    raise
                raise KeyboardInterrupt from None  # the loop no longer waits for this helper

        return on_loop


@dataclass(frozen=True)
class Ending:
    """How a worktree helper ended: its result (None: it failed, `failure` says how) and its changes."""

    label: str
    name: str  # "task1": its worktree's and, after the parent's name, its session's
    session: str
    result: TurnResult | None
    failure: ToolError | None
    changes: list[FileChange]
    diff: str

    @property
    def answered(self) -> bool:
        return self.result is not None and self.result.stopped_reason is None


@dataclass
class Held:
    """A helper's changes not brought into the workspace, and its worktree (kept for a look) — /tasks."""

    name: str
    label: str
    changes: list[FileChange]
    diff: str
    worktree: Worktree


def place_for(worktrees: Worktrees, name: str, workspace: Path, sandbox: Policy | None, on_loop) -> Place:
    """A worktree for helper `name` and the sandbox moved to it (WorktreeError: none can be made)."""
    worktree = worktrees.add(name, workspace)
    if sandbox is None:
        return Place(worktree, None, on_loop)
    temp_dir = sandbox.temp_dir / name  # removed with the session's temp dir
    temp_dir.mkdir(mode=0o700, exist_ok=True)
    return Place(worktree, helper_policy(sandbox, worktree.workspace, temp_dir, git_dirs_of(worktree.top)), on_loop)


def here(fn: Callable[[], object]) -> object:
    """on_loop for a helper that runs on the loop's thread already (alone in its reply)."""
    return fn()


def helper_mode(mode: str) -> str:
    """The helper's permission mode: `ask` edits its own worktree unasked (what reaches the user's files asks)."""
    return "accept-edits" if mode == "ask" else mode


def brief(place: Place, original: Path) -> str:
    return WORKTREE_BRIEF.format(path=place.workspace, original=original)


def changes_note(name: str, changes: list[FileChange], outcome: Outcome | None, diff: str, held: bool) -> str:
    """What the parent reads of a helper's changes: brought in, left and why, then the diff (capped)."""
    if not changes:
        return "\n[it changed no files]"
    parts = []
    if outcome is not None and outcome.applied:
        parts.append(f"brought into the workspace: {', '.join(outcome.applied)}")
    left = outcome.left if outcome is not None else [(change, "the helper did not finish") for change in changes]
    if left:
        reasons = "; ".join(f"{change.path} ({_short(why)})" for change, why in left)
        parts.append(f"NOT brought in: {reasons}")
    if held:
        parts.append(
            f"what was not brought in is held as {name}: the user can /tasks apply {name} or /tasks drop {name}"
        )
    if outcome is not None and outcome.conflicts:
        parts.append("merge a conflicted file yourself from the diff below")
    first = {change.path for change, _ in left}
    return f"\n[its changes: {'; '.join(parts)}]\n{capped_diff_text(diff, first)}"


def _short(why: str) -> str:
    return why if why == CONFLICT or len(why) <= 160 else why[:159] + "…"


def _files(diff: str) -> list[str]:
    return [part for part in FILE_START.split(diff) if part]


def _names_one_of(part: str, paths: set[str]) -> bool:
    head = part.split("\n", 1)[0]
    return any(head.endswith(f" b/{path}") for path in paths)


def diff_of(diff: str, paths: set[str]) -> str:
    """The part of `git diff`'s text about `paths`."""
    return "".join(part for part in _files(diff) if _names_one_of(part, paths))


def capped_diff_text(diff: str, first: set[str], limit: int = DIFF_FOR_PARENT_CHARS) -> str:
    """`git diff`'s text with the files in `first` before the others, cut at `limit` chars with a note."""
    ordered = sorted(_files(diff), key=lambda part: not _names_one_of(part, first))
    text = "\n".join(part.rstrip("\n") for part in ordered)
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… diff cut ({len(text) - limit:,} chars omitted; read the files brought in)"
