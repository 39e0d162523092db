"""Who acts, and so what a command may touch: the one place that decides a command's confinement.

Trust follows the actor, never the entry point a thing came through:

| actor      | what it is                                                   | where its commands run                |
|------------|--------------------------------------------------------------|---------------------------------------|
| user       | what the user typed or configured: `!command`, their hooks,  | unconfined, with the user's rights,   |
|            | MCP servers and command files (~/.claude/commands, …), /init | asking nothing (like their own shell),|
|            |                                                              | unless they chose `sandbox = true`;   |
|            |                                                              | hooks that run after the model acted  |
|            |                                                              | (PostToolUse, Stop, SubagentStop) run |
|            |                                                              | confined unless `sandbox = false`;    |
|            | their language servers ([lsp.LANGUAGE], or pylsp on PATH)    | read-only confined unless             |
|            |                                                              | `sandbox = false`                     |
| model      | every tool call (helpers' and background tasks' too), and    | the session's sandbox; leaving it     |
|            | what a repository's command file runs with its arguments     | takes the user's yes (approvals.py);  |
|            |                                                              | plan mode: the read-only sandbox      |
| repository | what the workspace holds and NanoHermes reads as settings:   | text, never a grant; a trusted        |
|            | AGENTS.md, .claude/, .nanohermes/ (rules, hooks, commands,   | workspace hook runs in the sandbox,   |
|            | skills)                                                      | whatever its file says                |

A hook the user wrote runs the model's work when it runs after the model: the auto-test recipe's
PostToolUse hook imports whatever test files a command wrote. Trusting a hook's text is not trusting
every file it runs, so such hooks are confined by default. A language server is the same: the user's
program, reading the files the model just wrote (and, for some servers, running what the workspace's
settings name: mypy's plugins, a build script); it only reads and answers, so it runs read-only.

`command_policy` is pure: the session's policy (None: the user chose level "off", nothing confines)
in, the policy this actor's command runs under out (None: unconfined).
"""

from __future__ import annotations

from pathlib import Path

from nanohermes.sandbox.policy import Policy

USER, MODEL, REPOSITORY = "user", "model", "repository"
ACTORS = (USER, MODEL, REPOSITORY)
# The events whose hooks run after the model acted, on what it wrote: confined unless the user says not.
AFTER_THE_MODEL = frozenset({"PostToolUse", "Stop", "SubagentStop"})


def command_policy(
    actor: str, session: Policy | None, *, sandbox: bool | None = None, mode: str = "", read_only: bool = False
) -> Policy | None:
    """The policy a command of `actor` runs under; None: unconfined.

    `sandbox`: the user's own choice for this hook or server (None: the default); `mode`: the
    session's permission mode (plan mode's commands may change nothing); `read_only`: the command
    only reads (a language server), so when confined it may change nothing either."""
    if actor not in ACTORS:
        raise ValueError(f"unknown actor {actor!r}")
    if session is None or not session.confined:  # level "off", chosen by the user: nothing confines
        return None
    if actor == USER and not sandbox:
        return None
    if (mode == "plan" or read_only) and session.level != "read-only":
        return session.with_level("read-only")
    return session


def helper_policy(session: Policy | None, worktree: Path, temp_dir: Path, git_dirs: tuple[Path, ...]) -> Policy | None:
    """The session policy of a helper working in its own git worktree (the model acting there):
    the worktree, not the user's workspace, is its writable root; the user's workspace, its `.git`
    and the worktree's git directories (`git_dirs`, in the main `.git`) are read-only to it like
    everything else. `command_policy` then applies to its commands as to any model's."""
    if session is None:
        return None
    return session.moved(worktree, temp_dir, git_dirs)


def server_sandboxed(sandbox: bool | None) -> bool:
    """Whether a language server runs confined: as the user set it, else yes (it reads what the
    model wrote, after it acted, as a PostToolUse hook does)."""
    return True if sandbox is None else sandbox


def hook_sandboxed(event: str, from_repository: bool, sandbox: bool | None) -> bool:
    """Whether a hook runs confined: a repository's always; the user's as they set it, else when
    it runs after the model acted."""
    if from_repository:
        return True
    return sandbox if sandbox is not None else event in AFTER_THE_MODEL
