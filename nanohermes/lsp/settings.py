"""`[lsp.LANGUAGE]` tables of config.toml, checked once when the configuration is loaded, and the
program each one runs.

    [lsp.python]                     # the table's name is the LSP language id
    command = ["pylsp"]              # a program on PATH (outside the workspace) or an absolute path
    timeout = 3                      # seconds an edit waits for the server's diagnostics
    startup_timeout = 10             # seconds the server has to answer `initialize`
    severity = "error"               # or "warning": warnings are reported too
    sandbox = true                   # false: the server runs unconfined, with your rights
    enabled = true                   # false: no diagnostics for this language

    [lsp.rust]
    command = ["rust-analyzer"]
    extensions = [".rs"]             # needed for any language but python (.py, .pyi)

Without an `[lsp.python]` table, `pylsp` found on PATH is Python's server. Only the user's
config.toml is read for these tables: a repository's `.nanohermes/config.toml` never names a
program to run (permissions/table.py reads only its rules and hooks), and a PATH directory inside
the workspace is the repository's, so a program is never looked up there.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from nanohermes.config import checked_seconds, checked_table
from nanohermes.errors import ConfigError

KEYS = frozenset({"command", "extensions", "timeout", "startup_timeout", "severity", "sandbox", "enabled"})
# pylsp answers a change in about half a second (its lint waits 0.5 s for more changes): three
# seconds leave it room on a busy machine and keep an edit from waiting long on a stuck server.
DEFAULT_TIMEOUT_S = 3.0
# pylsp answers `initialize` in a fraction of a second, pyright in one or two; a first start on a
# cold disk takes longer. Past this the server is taken to hang and is not waited on again.
DEFAULT_STARTUP_TIMEOUT_S = 10.0
SEVERITIES = {"error": 1, "warning": 2}  # the least severe reported, as LSP numbers it
DEFAULT_COMMANDS = {"python": ("pylsp",)}  # python-lsp-server; with pyflakes it reports undefined names
DEFAULT_EXTENSIONS = {"python": (".py", ".pyi")}
_NAME = re.compile(r"^[a-z][a-z0-9_+-]{0,39}$")  # LSP's language ids: python, rust, typescriptreact, …
_EXTENSION = re.compile(r"^\.[A-Za-z0-9_+-]{1,20}$")


@dataclass(frozen=True)
class ServerSettings:
    language: str  # the table's name, sent as the documents' languageId
    command: tuple[str, ...]
    extensions: tuple[str, ...]
    timeout: float = DEFAULT_TIMEOUT_S
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT_S
    severity: str = "error"
    sandbox: bool | None = None  # the user's choice; None: sandbox/actors.py's default
    enabled: bool = True  # False: no diagnostics for this language (Python's default turned off too)
    configured: bool = True  # False: the default, used only when found on PATH (its absence is not said)

    @property
    def label(self) -> str:
        """The server as notes name it: its program (`pylsp`), or the module a Python runs (`python -m pylsp`)."""
        program = os.path.basename(self.command[0])
        return self.command[2] if self.command[1:2] == ("-m",) and len(self.command) > 2 else program

    @property
    def least_severity(self) -> int:
        return SEVERITIES[self.severity]


def parse_lsp_table(table, path: Path) -> tuple[ServerSettings, ...]:
    """`[lsp]` as each language's settings (enabled or not), or a ConfigError naming the key to fix."""
    if not isinstance(table, dict) or not all(isinstance(entry, dict) for entry in table.values()):
        raise ConfigError(f'{path}: [lsp] holds one table per language, e.g. [lsp.python] with command = ["pylsp"].')
    parsed = [_language(name, entry, path) for name, entry in table.items()]
    return tuple(parsed)


def _language(name: str, entry: dict, path: Path) -> ServerSettings:
    where = f"{path} [lsp.{name}]"
    if not _NAME.match(name):
        raise ConfigError(f"{where}: a language is its LSP id: lower-case letters, digits, '_', '+', '-' (up to 40).")
    checked_table(entry, KEYS, where, f"{where} must be a table.")
    enabled = entry.get("enabled", True)
    sandbox = entry.get("sandbox")
    if not isinstance(enabled, bool) or not isinstance(sandbox, bool | None):
        raise ConfigError(f"{where}: enabled and sandbox must be true or false.")
    if "command" not in entry and name not in DEFAULT_COMMANDS:
        raise ConfigError(f'{where} needs command, e.g. command = ["{name}-language-server"].')
    command = tuple(_strings(entry, "command", DEFAULT_COMMANDS.get(name, ()), where))
    if not command or not command[0].strip():
        raise ConfigError(f'{where}: command must name a program, e.g. command = ["pylsp"].')
    if "/" in command[0] and not command[0].startswith(("/", "~")):
        raise ConfigError(f"{where}: command's program is a name looked up on PATH or an absolute path, not relative.")
    extensions = tuple(_strings(entry, "extensions", DEFAULT_EXTENSIONS.get(name, ()), where))
    if not extensions or not all(_EXTENSION.match(e) for e in extensions):
        raise ConfigError(f'{where}: extensions must list the files it checks, e.g. extensions = [".rs"].')
    severity = entry.get("severity", "error")
    if severity not in SEVERITIES:
        raise ConfigError(f'{where}: severity must be "error" or "warning", got {severity!r}.')
    return ServerSettings(
        name,
        command,
        extensions,
        checked_seconds(entry, "timeout", DEFAULT_TIMEOUT_S, where),
        checked_seconds(entry, "startup_timeout", DEFAULT_STARTUP_TIMEOUT_S, where),
        severity,
        sandbox,
        enabled,
    )


def _strings(entry: dict, key: str, default: tuple[str, ...], where: str) -> list[str]:
    value = entry.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {key} must be a list of strings.")
    return value


def in_force(table: tuple[ServerSettings, ...] | None) -> list[ServerSettings]:
    """The languages a session checks: the configured ones enabled, then each default whose
    language has no table (one with enabled = false turns the default off too)."""
    named = {s.language for s in table or ()}
    configured = [s for s in table or () if s.enabled]
    defaults = [
        ServerSettings(language, command, DEFAULT_EXTENSIONS[language], configured=False)
        for language, command in DEFAULT_COMMANDS.items()
        if language not in named
    ]
    return configured + defaults


def resolve_program(command: tuple[str, ...], workspace: Path) -> tuple[list[str] | None, str]:
    """(the argv to start, or None; why not, in words: "" when it is simply not on PATH). A name is
    looked up on PATH without its relative entries and the directories inside the workspace (the
    repository's: it may not name a program to run); an absolute or ~ path is the user's own
    choice, taken as written."""
    program = command[0]
    if program.startswith(("/", "~")):
        expanded = Path(program).expanduser()
        if not os.access(expanded, os.X_OK) or expanded.is_dir():
            return None, f"{expanded} is not an executable file"
        return [str(expanded), *command[1:]], ""
    entries = [e for e in os.environ.get("PATH", "").split(os.pathsep) if e]
    outside = [e for e in entries if os.path.isabs(e) and not _inside(Path(e), workspace)]
    found = shutil.which(program, path=os.pathsep.join(outside))
    if found:
        return [found, *command[1:]], ""
    only_inside = shutil.which(program, path=os.pathsep.join(entries))
    if only_inside:
        return None, (
            f"{program} is on PATH only inside the workspace ({only_inside}), which the repository controls; "
            "name it by its absolute path in command to use it"
        )
    return None, ""


def _inside(directory: Path, workspace: Path) -> bool:
    try:
        resolved = directory.resolve()
    except OSError:
        return False
    return resolved == workspace or workspace in resolved.parents
