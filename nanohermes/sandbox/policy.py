"""What a sandboxed command may touch: the `[sandbox]` settings and the policy they make.

    [sandbox]
    level = "workspace-write"        # or "read-only", or "off" (commands run unconfined)
    network = false                  # true: commands may use the network
    hidden = ["~/.kube", "/srv/secrets"]   # added to the default hidden paths

`parse_sandbox_table` checks the table once, when the configuration is loaded;
`build_policy` is pure (paths in, a Policy out); `policy_for` is its I/O edge (resolves links,
reads $HOME and $SSH_AUTH_SOCK, makes the private temp dir).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from nanohermes.config import checked_table
from nanohermes.errors import ConfigError

LEVELS = ("read-only", "workspace-write", "off")
DEFAULT_LEVEL = "workspace-write"
TABLE_KEYS = frozenset({"level", "network", "hidden"})

# Credentials no build or test needs to read: keys, cloud and GitHub tokens, passwords.
HIDDEN_IN_HOME = (".ssh", ".aws", ".config/gh", ".netrc", ".gnupg")
# NanoHermes's own secrets and transcripts: the API key may be in config.toml, and sessions
# hold every conversation (with whatever secrets passed through it).
HIDDEN_IN_STATE = ("config.toml", "sessions")
# Read-only even inside the writable workspace, because what is written there runs later
# outside the sandbox, with the user's full rights:
# - .nanohermes/: the project's skills and settings, read into the agent's own prompt;
# - .git/hooks: programs git runs on commit, checkout, push …;
# - .git/config: it can name programs too (core.hooksPath, core.fsmonitor, core.pager,
#   core.sshCommand, `!` aliases, filter and diff drivers), run by the user's next `git status`.
PROTECTED_IN_WORKSPACE = (".nanohermes", ".git/hooks", ".git/config")
TEMP_PREFIX = "nanohermes-sandbox-"


@dataclass(frozen=True)
class SandboxSettings:
    """The `[sandbox]` table, checked; `hidden` holds the user's extra paths as written."""

    level: str = DEFAULT_LEVEL
    network: bool = False
    hidden: tuple[str, ...] = ()

    def with_level(self, level: str) -> SandboxSettings:
        """`--sandbox LEVEL` over the file's value; a ConfigError for an unknown level."""
        return replace(self, level=_level(level, "--sandbox"))


def _level(value, where: str) -> str:
    if value not in LEVELS:
        raise ConfigError(f"{where}: level must be one of {', '.join(repr(v) for v in LEVELS)}, got {value!r}.")
    return value


def parse_sandbox_table(table, path: Path) -> SandboxSettings:
    """`[sandbox]` as settings, or a ConfigError naming the key to fix."""
    where = f"{path} [sandbox]"
    checked_table(table, TABLE_KEYS, where, f'{where} must be a table, e.g. [sandbox] with level = "workspace-write".')
    network = table.get("network", False)
    if not isinstance(network, bool):
        raise ConfigError(f"{where}: network must be true or false.")
    hidden = table.get("hidden", [])
    if not isinstance(hidden, list) or not all(isinstance(p, str) and p.startswith(("/", "~")) for p in hidden):
        raise ConfigError(f'{where}: hidden must be a list of absolute or ~ paths, e.g. hidden = ["~/.kube"].')
    return SandboxSettings(_level(table.get("level", DEFAULT_LEVEL), where), network, tuple(hidden))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@dataclass(frozen=True)
class Policy:
    """Plain data: what a confined command may write, must not write, must not see.

    Paths are absolute and resolved. A path is writable when it is under a writable root and
    not under a read-only or hidden one; the most specific rule wins (a temp dir under the
    read-only state directory stays writable)."""

    level: str
    network: bool
    workspace: Path
    temp_dir: Path
    state_dir: Path
    user_home: Path
    writable: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = field(default=())

    @property
    def confined(self) -> bool:
        return self.level != "off"

    def with_network(self, allowed: bool = True) -> Policy:
        """The same rules with the network on (a command the user allowed to go online)."""
        return replace(self, network=allowed)

    def shown(self, path: Path) -> str:
        """`.git/hooks` for a path in the workspace, `~/.ssh` in the user's home, else the path."""
        if self.workspace in path.parents:
            return str(path.relative_to(self.workspace))
        return "~/" + str(path.relative_to(self.user_home)) if self.user_home in path.parents else str(path)

    def _closest(self, path: Path) -> str | None:
        """Which rule decides `path`: 'writable', 'read_only', 'hidden' or None (read-only by default)."""
        best: tuple[int, str] | None = None
        for kind in ("writable", "read_only", "hidden"):
            for root in getattr(self, kind):
                if _inside(path, root) and (best is None or len(root.parts) >= best[0]):
                    best = (len(root.parts), kind)
        return best[1] if best else None

    def is_writable(self, path: Path) -> bool:
        return self._closest(path) == "writable"

    def is_hidden(self, path: Path) -> bool:
        return self._closest(path) == "hidden"

    def is_protected(self, path: Path) -> bool:
        """Read-only by a rule (not merely outside every writable root)."""
        return self._closest(path) == "read_only"


def build_policy(
    settings: SandboxSettings,
    *,
    workspace: Path,
    state_dir: Path,
    user_home: Path,
    temp_dir: Path,
    extra_hidden: tuple[Path, ...] = (),
) -> Policy:
    """The policy for these absolute, resolved paths (pure). Under `read-only` only the temp
    dir is writable; under `off` nothing is confined (the lists are kept for the words)."""
    writable = (temp_dir,) if settings.level == "read-only" else (workspace, temp_dir)
    read_only = (*(workspace / p for p in PROTECTED_IN_WORKSPACE), state_dir)
    user_hidden = (
        user_home / p[2:] if p.startswith("~/") else user_home if p == "~" else Path(p) for p in settings.hidden
    )
    hidden = (*(user_home / p for p in HIDDEN_IN_HOME), *(state_dir / p for p in HIDDEN_IN_STATE), *user_hidden)
    places = (workspace, temp_dir, state_dir, user_home)  # in Policy's order
    return Policy(
        settings.level, settings.network, *places, writable, _unique(read_only), _unique((*hidden, *extra_hidden))
    )


def _unique(paths) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(Path(os.path.normpath(p)) for p in paths))


def make_temp_dir() -> Path:
    """A fresh private temp dir (0700) for one session's commands; the caller removes it at the end."""
    return Path(tempfile.mkdtemp(prefix=TEMP_PREFIX)).resolve()


def policy_for(settings: SandboxSettings, workspace: Path, state_dir: Path, temp_dir: Path | None = None) -> Policy:
    """The policy for this machine: links resolved, $HOME read, the ssh-agent's socket hidden
    (with it a command could sign in to servers as the user), a temp dir made when none is given."""
    agent = os.environ.get("SSH_AUTH_SOCK")
    policy = build_policy(
        settings,
        workspace=Path(workspace).resolve(),
        state_dir=Path(state_dir).expanduser().resolve(),
        user_home=Path.home().resolve(),
        temp_dir=(Path(temp_dir) if temp_dir else make_temp_dir()).resolve(),
        extra_hidden=(Path(agent),) if agent and os.path.isabs(agent) else (),
    )
    return replace(policy, hidden=_unique(p.resolve() for p in policy.hidden))  # a hidden link hides its target
