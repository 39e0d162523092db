"""Which workspaces' hooks the user trusts: `$NANOHERMES_HOME/trust/<hash of the workspace>.json`.

A repository's `.nanohermes/config.toml`, `.claude/settings.json` and `.claude/settings.local.json`
may define hooks: anyone who wrote the repository wrote them. They run (in the sandbox:
sandbox/actors.py) only once the user said yes to them (the REPL's question, or
`--trust-workspace`), and that yes covers those definitions and the scripts they name
(settings.definitions_digest): a change revokes it. The file lives in the
state directory, which commands in the sandbox cannot write; a file that is not what
NanoHermes wrote trusts nothing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from nanohermes.errors import NanoHermesError
from nanohermes.fileio import read_regular
from nanohermes.hooks.settings import TOOL_EVENTS
from nanohermes.hooks.vocabulary import matches_no_tool, no_tool_words
from nanohermes.storage.locking import replace_atomically

KEY_CHARS = 16  # of the workspace path's sha256, as permissions/saved.py; the path inside catches a collision
MAX_FILE_BYTES = 10_000  # a path and a digest
COMMAND_CHARS = 60  # a hook's command as a warning names it


class TrustError(NanoHermesError):
    """The trust could not be saved (a read-only state directory); it holds for this session."""


def trust_path(home: Path, workspace: Path) -> Path:
    key = hashlib.sha256(str(workspace).encode("utf-8", "surrogateescape")).hexdigest()[:KEY_CHARS]
    return Path(home) / "trust" / f"{key}.json"


def is_trusted(home: Path, workspace: Path, digest: str) -> bool:
    """Whether the user trusted exactly these hook definitions of this workspace."""
    try:
        data = json.loads(read_regular(trust_path(home, workspace), MAX_FILE_BYTES).decode("utf-8"))
    except (OSError, ValueError):  # none yet, or not a file NanoHermes wrote
        return False
    return isinstance(data, dict) and data.get("workspace") == str(workspace) and data.get("hooks") == digest


def trust(home: Path, workspace: Path, digest: str) -> None:
    """Keep the user's yes to these hook definitions (TrustError when it cannot be written)."""
    path = trust_path(home, workspace)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise TrustError(f"cannot create {path.parent}: {exc.strerror}") from None
    payload = json.dumps({"workspace": str(workspace), "hooks": digest}, ensure_ascii=False) + "\n"
    replace_atomically(path, payload.encode("utf-8"), ".trust.", TrustError)


UNTRUSTED = (
    "The workspace defines {count} hook(s) in {files}: commands that would run in the sandbox on the session's "
    "events. It is not trusted with them (or they changed since), so they will not run. Trust them by answering "
    "yes when the REPL asks, or with --trust-workspace."
)


def hooks_in_force(settings, home: Path, workspace: Path, ask, warn) -> tuple:
    """The hooks that may run: the user's, and the workspace's when the user trusts them — kept
    from before for these very definitions, or `ask(project hooks)` says yes now (None: nothing
    can ask). `warn`: said when the workspace's are left out, or a yes cannot be kept."""
    if settings is None:
        return ()
    for problem in (settings.project_problem, *settings.warnings):
        if problem:
            warn(problem)
    if not settings.project or is_trusted(home, workspace, settings.project_digest):
        return _trusted(settings, warn)
    if ask is None or not ask(settings.project):
        warn(UNTRUSTED.format(files=" and ".join(settings.project_files), count=len(settings.project)))
        return settings.user
    try:
        trust(home, workspace, settings.project_digest)
    except TrustError as exc:
        warn(f"{exc}; the workspace's hooks are trusted for this session only.")
    return _trusted(settings, warn)


def _trusted(settings, warn) -> tuple:
    """The user's hooks and the workspace's (trusted, or none); what its Claude Code files hold that
    cannot run, said (left out untrusted, they are not: nothing of them runs anyway)."""
    for problem in settings.project_warnings:
        warn(problem)
    return settings.user + settings.project


def unmatched_warnings(specs: tuple, tool_names: list[str]) -> list[str]:
    """A warning for each hook whose matcher no tool of the session satisfies (`Bsh` for `Bash`)."""
    return [
        f"The {spec.event} hook from {spec.source} ({spec.command[:COMMAND_CHARS]}): {no_tool_words(spec.matcher)}."
        for spec in specs
        if spec.event in TOOL_EVENTS and matches_no_tool(spec.matcher, spec.claude, tool_names)
    ]
