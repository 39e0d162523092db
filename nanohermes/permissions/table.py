"""Where rules come from: `[permissions]` in config.toml, the project's `.nanohermes/config.toml`,
and `--allow` / `--deny` on the command line. Each is parsed and checked once, at start; a rule
that is not one is a ConfigError naming the file (or flag) and the rule.

A repository cannot grant itself anything: the project's file (inside the workspace, so
anyone who wrote the repository wrote it) may only add `ask` and `deny` rules; an `allow` there
is ignored with a warning naming it, and so is every other setting in that file (a repository
must not choose the model's endpoint either).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from nanohermes.config import checked_table
from nanohermes.errors import ConfigError
from nanohermes.fileio import NotRegularFile, read_regular
from nanohermes.permissions.rules import ALLOW, ASK, DENY, Rule, parse_rule

FROM_CONFIG = "config.toml"
FROM_PROJECT = "the project's .nanohermes/config.toml"
FROM_FLAGS = "the command line"
PROJECT_CONFIG = Path(".nanohermes") / "config.toml"
PROJECT_CONFIG_BYTES = 1_000_000  # a rules file is a few lines; more is not a config file


@dataclass(frozen=True)
class PermissionSettings:
    """Every rule in force from files and flags, in the order read, and what was ignored."""

    rules: tuple[Rule, ...] = ()
    warnings: tuple[str, ...] = ()


def parse_permissions_table(table, path: Path, source: str = FROM_CONFIG, effects=(ALLOW, ASK, DENY)) -> list[Rule]:
    """The rules of a `[permissions]` table read from `path`, or ConfigError saying what is wrong."""
    not_a_table = f"{path}: permissions must be a table ([permissions] with allow, ask and deny lists)."
    table = checked_table(table, frozenset({ALLOW, ASK, DENY}), f"{path}: [permissions]", not_a_table)
    rules = []
    for effect in effects:
        values = table.get(effect, [])
        if not isinstance(values, list):
            example = f'{effect} = ["edit_file"]'
            raise ConfigError(f"{path}: [permissions] {effect} must be a list of rules, e.g. {example}.")
        for value in values:
            try:
                rules.append(parse_rule(value, effect, source))
            except ValueError as exc:
                raise ConfigError(f"{path}: [permissions] {effect}: {exc}.") from None
    return rules


def from_config_table(table, path: Path) -> PermissionSettings:
    """config.toml's own [permissions] (registered in configure.py's parse_tables)."""
    return PermissionSettings(tuple(parse_permissions_table(table, path)))


def with_project_and_flags(
    settings: PermissionSettings | None, workspace: Path, home: Path, allow=(), deny=()
) -> PermissionSettings:
    """`settings` (config.toml's) with the project's ask and deny rules and the command line's."""
    settings = settings or PermissionSettings()
    project, warnings = project_rules(workspace, home)
    flags = []
    for effect, texts in ((ALLOW, allow or ()), (DENY, deny or ())):
        for text in texts:
            try:
                flags.append(parse_rule(text, effect, FROM_FLAGS))
            except ValueError as exc:
                raise ConfigError(f"--{effect} {text!r}: {exc}.") from None
    return replace(settings, rules=settings.rules + tuple(project) + tuple(flags), warnings=tuple(warnings))


def project_rules(workspace: Path, home: Path) -> tuple[list[Rule], list[str]]:
    """The ask and deny rules of the workspace's .nanohermes/config.toml, and the warnings for
    what in it was ignored ([hooks] is read by hooks/settings.py, and runs only once trusted)."""
    data, problem = read_project_file(workspace, home)
    if problem:
        return [], [problem]
    warnings = []
    others = sorted(set(data) - {"permissions", "hooks"})
    if others:
        warnings.append(
            f"{workspace / PROJECT_CONFIG}: only [permissions] and [hooks] are read from a project's file; "
            f"ignored: {', '.join(others)}."
        )
    table = data.get("permissions", {})
    if isinstance(table, dict) and table.get(ALLOW):
        allowed = ", ".join(str(a) for a in table[ALLOW]) if isinstance(table[ALLOW], list) else str(table[ALLOW])
        warnings.append(
            f"{workspace / PROJECT_CONFIG}: ignored allow = [{allowed}]: a repository cannot grant itself anything. "
            "Put allow rules in your own config.toml, or pass --allow."
        )
    if isinstance(table, dict):
        table = {k: v for k, v in table.items() if k != ALLOW}
    return parse_permissions_table(table, workspace / PROJECT_CONFIG, FROM_PROJECT, effects=(ASK, DENY)), warnings


def read_project_file(workspace: Path, home: Path) -> tuple[dict, str]:
    """The workspace's .nanohermes/config.toml as a dict ({} when there is none), and why it was
    not read ("" when it was). The state directory's own config.toml is never read as a project's."""
    path = workspace / PROJECT_CONFIG
    try:
        if path.samefile(home / "config.toml"):
            return {}, ""
    except OSError:  # either is missing: they are not one file
        pass
    from nanohermes.repo_files import Boundary

    try:
        if os.path.lexists(path):  # the repository-file rule (repo_files.py): no link out of the workspace
            Boundary.of(home, workspace).check(path)
        raw = read_regular(path, PROJECT_CONFIG_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):  # NotADirectory: the sandbox's placeholder for a missing one
        return {}, ""
    except (NotRegularFile, OSError) as exc:
        return {}, f"{path} was not read ({exc.strerror or exc}); its rules and hooks are not in force."
    if len(raw) > PROJECT_CONFIG_BYTES:
        raise ConfigError(f"{path} is over {PROJECT_CONFIG_BYTES:,} bytes; a rules file is a few lines. Fix it.")
    return _toml(raw, path), ""


def _toml(raw: bytes, path: Path) -> dict:
    import tomllib

    from nanohermes.bounded import parse_toml

    try:
        return parse_toml(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; TOML files must be UTF-8. Fix or remove it.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}. Fix or remove it.") from None


def unknown_tool_warnings(rules, tool_names) -> list[str]:
    """A rule naming no tool of this session (a typo in a deny rule must not pass unnoticed)."""
    known = set(tool_names)
    return [
        f"the rule {rule.effect} {rule.text()} (from {rule.source}) names no tool of this session "
        f"({', '.join(sorted(known))}); it has no effect."
        for rule in rules
        if rule.tool not in known
    ]
