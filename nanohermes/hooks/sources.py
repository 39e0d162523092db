"""Every file hooks come from, gathered once at start into one HookSettings.

The user's: config.toml's [[hooks.EVENT]] and Claude Code's ~/.claude/settings.json
($CLAUDE_CONFIG_DIR). The workspace's, which run only once trusted (hooks/trust.py), under one
digest: .nanohermes/config.toml's, and Claude Code's .claude/settings.json and
.claude/settings.local.json. A handler Claude Code's files define more than once runs once, as
there (the user's copy kept).
"""

from __future__ import annotations

from pathlib import Path

from nanohermes.hooks.claude_settings import read_claude_hooks
from nanohermes.hooks.settings import (
    FROM_CLAUDE_LOCAL,
    FROM_CLAUDE_PROJECT,
    FROM_CLAUDE_USER,
    HookSettings,
    HookSpec,
    definitions_digest,
    project_hooks,
)

CLAUDE_USER_FILE = "settings.json"
CLAUDE_PROJECT_FILES = (
    (".claude/settings.json", FROM_CLAUDE_PROJECT),
    (".claude/settings.local.json", FROM_CLAUDE_LOCAL),
)
NANOHERMES_PROJECT_FILE = ".nanohermes/config.toml"


def hook_settings(user: HookSettings | None, project_data: dict, workspace: Path, claude_dir: Path) -> HookSettings:
    """The user's config.toml hooks (`user`, None: none), and the rest read here: Claude Code's user
    file in `claude_dir`, the workspace's config.toml (`project_data`, as permissions/table.py read
    it) and its two Claude Code files."""
    mine = read_claude_hooks(claude_dir / CLAUDE_USER_FILE, FROM_CLAUDE_USER, workspace)
    toml = project_hooks(project_data, workspace)
    theirs = {name: read_claude_hooks(workspace / name, source, workspace) for name, source in CLAUDE_PROJECT_FILES}
    user_specs = without_repeats((user.user if user is not None else ()) + mine.specs)
    project_specs = without_repeats(
        toml.project + tuple(spec for read in theirs.values() for spec in read.specs), user_specs
    )
    files = [NANOHERMES_PROJECT_FILE] if toml.project else []
    files += [name for name, read in theirs.items() if read.specs]
    digest = toml.project_digest
    if any(read.specs for read in theirs.values()):  # one trust for all three files and the scripts they name
        tables = {NANOHERMES_PROJECT_FILE: project_data.get("hooks")} | {n: r.table for n, r in theirs.items()}
        digest = definitions_digest(tables, project_specs, workspace)
    return HookSettings(
        user_specs,
        project_specs,
        digest,
        toml.project_problem,
        (mine.warning,) if mine.warning else (),
        tuple(files),
        tuple(read.warning for read in theirs.values() if read.warning),
    )


def without_repeats(specs: tuple[HookSpec, ...], before: tuple[HookSpec, ...] = ()) -> tuple[HookSpec, ...]:
    """`specs` without a Claude Code handler defined already (the same event, matcher and command)."""
    seen = {(s.event, s.matcher, s.command) for s in before}
    kept = []
    for spec in specs:
        key = (spec.event, spec.matcher, spec.command)
        if spec.claude and key in seen:
            continue
        seen.add(key)
        kept.append(spec)
    return tuple(kept)
