"""`[[hooks.EVENT]]` tables: what runs on which event, from whose file.

The user's own config.toml ($NANOHERMES_HOME) holds hooks that run; the workspace's
.nanohermes/config.toml may hold hooks too, which run only once the user trusts them
(hooks/trust.py). Each is checked once, at start: an unknown event, a key that is not one, a
matcher that is no regex or a timeout that is no number is a ConfigError naming the file.
Claude Code's settings files add hooks of the same two kinds (hooks/claude_settings.py): the
user's ~/.claude/settings.json, and the project's .claude/settings.json and settings.local.json
behind the same trust as the workspace's config.toml, one digest covering all three.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from nanohermes.config import checked_seconds, checked_table
from nanohermes.errors import ConfigError
from nanohermes.fileio import read_regular
from nanohermes.hooks.vocabulary import MATCH_ALL, matched_name, matcher_error
from nanohermes.sandbox.actors import hook_sandboxed

EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PreCompact",
    "PostCompact",
    "Stop",
    "SubagentStop",
)
# The events a matcher over the tool name applies to. PostToolUseFailure (Claude Code's): after a call
# that failed (an error, or a command that exited non-zero); a settings file's PostToolUse, after one that did not.
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})
KEYS = frozenset({"command", "matcher", "timeout", "sandbox"})
DEFAULT_TIMEOUT = 60.0  # seconds, as Claude Code's: a formatter or a test run fits, a hang does not hold a turn long
FROM_USER = "config.toml"
FROM_PROJECT = "the workspace's .nanohermes/config.toml"
FROM_CLAUDE_USER = "Claude Code's settings.json"  # ~/.claude/settings.json, or $CLAUDE_CONFIG_DIR's
FROM_CLAUDE_PROJECT = "the workspace's .claude/settings.json"
FROM_CLAUDE_LOCAL = "the workspace's .claude/settings.local.json"
USER_SOURCES = frozenset({FROM_USER, FROM_CLAUDE_USER})
CLAUDE_SOURCES = frozenset({FROM_CLAUDE_USER, FROM_CLAUDE_PROJECT, FROM_CLAUDE_LOCAL})
# A command names the workspace so (Claude Code's scripts: "$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh).
PROJECT_DIR_WORDS = (
    "${CLAUDE_PROJECT_DIR}",
    "$CLAUDE_PROJECT_DIR",
    "${NANOHERMES_PROJECT_DIR}",
    "$NANOHERMES_PROJECT_DIR",
)
SCRIPT_BYTES = 1_000_000  # a hook script named by a project's hook, hashed with its definition; more is no script


@dataclass(frozen=True)
class HookSpec:
    event: str
    command: str  # run by bash in the workspace
    matcher: str | None = None  # what the tool name must match (None, "" or "*": every tool); hooks/vocabulary.py
    timeout: float = DEFAULT_TIMEOUT
    source: str = FROM_USER
    sandbox: bool | None = None  # the user's choice; None: by the event (sandbox/actors.py)

    @property
    def from_user(self) -> bool:
        """From the user's own files (config.toml, Claude Code's ~/.claude): only such a hook's "allow"
        may skip a question."""
        return self.source in USER_SOURCES

    @property
    def claude(self) -> bool:
        """From one of Claude Code's settings files: its matcher grammar, and Claude's tool names first."""
        return self.source in CLAUDE_SOURCES

    @property
    def sandboxed(self) -> bool:
        """Whether it runs confined (sandbox/actors.py: a workspace's always, the user's by event or choice;
        a failed call's hook runs after the model as a finished call's does)."""
        event = "PostToolUse" if self.event == "PostToolUseFailure" else self.event
        return hook_sandboxed(event, not self.from_user, self.sandbox)

    def told(self, value: str | None) -> str | None:
        """The name the hook is told for the tool (or source, trigger) `value`: the one its matcher
        took, in its file's vocabulary first; None when the matcher takes none (None: nothing to match)."""
        if value is None:
            return None if self.matcher in MATCH_ALL else value
        return matched_name(self.matcher, value, self.claude)

    def matches(self, value: str | None) -> bool:
        return value is None or self.told(value) is not None


@dataclass(frozen=True)
class HookSettings:
    """The user's hooks, and the workspace's with the digest its trust is kept under."""

    user: tuple[HookSpec, ...] = ()
    project: tuple[HookSpec, ...] = ()
    project_digest: str = ""  # sha256 of the project's [hooks] and the scripts they name
    project_problem: str = ""  # why the project's hooks were not read (a warning: they could not run anyway)
    warnings: tuple[str, ...] = ()  # a broken Claude Code settings file, or what in one NanoHermes cannot run
    project_files: tuple[str, ...] = ()  # the workspace's files that define them, for the trust question
    project_warnings: tuple[str, ...] = ()  # the same about the workspace's Claude Code files: said once trusted


def parse_hooks_table(table, path: Path | str, source: str = FROM_USER) -> tuple[HookSpec, ...]:
    """The hooks of a `[hooks]` table (`[[hooks.EVENT]]` lists), or a ConfigError saying what is wrong."""
    if not isinstance(table, dict):
        raise ConfigError(f'{path}: hooks must be tables, e.g. [[hooks.PreToolUse]] with command = "...".')
    specs = []
    for event, entries in table.items():
        if event not in EVENTS:
            raise ConfigError(f"{path}: [hooks] has no event {event!r}; the events: {', '.join(EVENTS)}.")
        if not isinstance(entries, list):
            raise ConfigError(f"{path}: write hooks.{event} as [[hooks.{event}]] tables (a list of them).")
        for entry in entries:
            specs.append(_spec(event, entry, f"{path}: [[hooks.{event}]]", source))
    return tuple(specs)


def _spec(event: str, entry, where: str, source: str) -> HookSpec:
    entry = checked_table(entry, KEYS, where, f'{where} must be a table with command = "...".')
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f"{where}: command must be a non-empty string (run by bash in the workspace).")
    matcher = entry.get("matcher")
    if matcher is not None:
        if event not in TOOL_EVENTS:
            raise ConfigError(f"{where}: matcher applies to PreToolUse, PostToolUse and PostToolUseFailure only.")
        if not isinstance(matcher, str):
            raise ConfigError(f"{where}: matcher must be a string (a regex over the tool name).")
        if error := matcher_error(matcher, claude=False):
            raise ConfigError(f"{where}: matcher {error}.")
    timeout = checked_seconds(entry, "timeout", DEFAULT_TIMEOUT, where)
    sandbox = entry.get("sandbox")
    if sandbox is not None and not isinstance(sandbox, bool):
        raise ConfigError(f"{where}: sandbox must be true or false (run the hook in the sandbox, or with your rights).")
    return HookSpec(event, command, matcher, timeout, source, sandbox)


def project_hooks(data: dict, workspace: Path) -> HookSettings:
    """The hooks of the workspace's .nanohermes/config.toml (read by permissions/table.py's
    read_project_file), with the digest of what they would run."""
    table = data.get("hooks")
    if table is None:
        return HookSettings()
    path = workspace / ".nanohermes" / "config.toml"
    try:
        specs = parse_hooks_table(table, path, FROM_PROJECT)
    except ConfigError as exc:  # a repository's mistake stops no run: its hooks never run untrusted anyway
        return HookSettings(project_problem=f"{exc} The workspace's hooks are ignored.")
    return HookSettings(project=specs, project_digest=definitions_digest(table, specs, workspace))


def definitions_digest(table: dict, specs: tuple[HookSpec, ...], workspace: Path) -> str:
    """What a trust covers: the hook definitions, and the bytes of every workspace file a command
    names (`.nanohermes/check.sh`): a changed script revokes the trust as a changed command does."""
    digest = hashlib.sha256(json.dumps(table, sort_keys=True, default=str).encode())
    for spec in specs:
        for word in _words(spec.command):
            named = word
            for placeholder in PROJECT_DIR_WORDS:  # "$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh names a workspace file
                named = named.replace(placeholder, str(workspace))
            try:
                path = (workspace / named).resolve()
                if not (path.is_relative_to(workspace.resolve()) and path.is_file()):
                    continue
                data = read_regular(path, SCRIPT_BYTES)
            except (OSError, ValueError):  # unreadable, or no path at all (a NUL in it)
                data = b"(unreadable)"
            digest.update(word.encode("utf-8", "surrogateescape") + b"\0" + data)
    return digest.hexdigest()


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:  # an unclosed quote: bash will say so when it runs
        return command.split()
