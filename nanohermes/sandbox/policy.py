"""What a sandboxed command may touch: the `[sandbox]` settings and the policy they make.

    [sandbox]
    level = "workspace-write"        # or "read-only", or "off" (commands run unconfined)
    network = false                  # true: commands may use the whole network
    allow_domains = ["pypi.org", "*.pythonhosted.org"]   # with network off: these hosts only, by a proxy
    allow_unix_sockets = ["/var/run/docker.sock"]        # Unix sockets a command may connect to
    hidden = ["~/.kube", "/srv/secrets"]   # added to the default hidden paths
    landlock_gaps = "refuse"         # or "accept": under Landlock alone, run commands although it
                                     # cannot keep .git, .nanohermes/, .claude/ read-only in the workspace

`parse_sandbox_table` checks the table once, when the configuration is loaded;
`build_policy` is pure (paths in, a Policy out); `policy_for` is its I/O edge (resolves links,
reads $HOME and $SSH_AUTH_SOCK, makes the private temp dir).
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from nanohermes.config import checked_table
from nanohermes.errors import ConfigError

LEVELS = ("read-only", "workspace-write", "off")
DEFAULT_LEVEL = "workspace-write"
TABLE_KEYS = frozenset({"level", "network", "hidden", "allow_domains", "allow_unix_sockets", "landlock_gaps"})
LANDLOCK_GAPS = ("refuse", "accept")

# Credentials no build or test needs to read: keys, cloud and GitHub tokens, passwords.
HIDDEN_IN_HOME = (".ssh", ".aws", ".config/gh", ".netrc", ".gnupg")
# The state directory ($NANOHERMES_HOME) is hidden whole: config.toml may hold the API key,
# sessions/ every conversation, mcp/oauth/ client secrets and tokens, checkpoints/ copies of
# files, permissions/ the answers that let calls run unasked. No command needs any of it.
# Read-only even inside the writable workspace, as whole directories (a mount each, so nothing
# in them can be added, changed, renamed or replaced, nor the directory itself), because what
# is written there runs later outside the sandbox, with the user's full rights, or is read as
# the user's settings:
# - .git: its hooks and config name programs git runs (core.hooksPath, core.fsmonitor,
#   core.pager, filter drivers, `!` aliases); protecting only .git/hooks and .git/config let a
#   command rename .git away and put a copy with a hooks path in its place. git writes its index
#   and HEAD by renaming into .git itself, so no part of it can stay writable: commits, `git
#   add`, `git stash` run outside the sandbox, with the user's approval (as in Codex);
# - .nanohermes/ and .claude/: the project's settings, hooks, commands and skills, read into
#   the agent's own prompt or run as hooks.
PROTECTED_IN_WORKSPACE = (".git", ".nanohermes", ".claude")
GIT_POINTER_BYTES = 4096  # a `.git` file holds one `gitdir:` line
GITMODULES_BYTES = 1_000_000  # .gitmodules: a few lines per submodule
SUBMODULE_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$", re.M)
TEMP_PREFIX = "nanohermes-sandbox-"


@dataclass(frozen=True)
class SandboxSettings:
    """The `[sandbox]` table, checked; `hidden` holds the user's extra paths as written."""

    level: str = DEFAULT_LEVEL
    network: bool = False
    hidden: tuple[str, ...] = ()
    allow_domains: tuple[str, ...] = ()  # canonical host patterns (sandbox/hosts.py)
    allow_unix_sockets: tuple[str, ...] = ()  # absolute or ~ paths as written
    landlock_gaps: str = "refuse"  # "accept": Landlock alone runs commands with .git etc. left writable

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
    hidden = _paths(table, "hidden", where, '["~/.kube"]')
    sockets = _paths(table, "allow_unix_sockets", where, '["/var/run/docker.sock"]')
    domains = table.get("allow_domains", [])
    if not isinstance(domains, list) or not all(isinstance(d, str) for d in domains):
        raise ConfigError(f'{where}: allow_domains must be a list of host names, e.g. ["pypi.org", "*.github.com"].')
    from nanohermes.sandbox.hosts import pattern_of

    try:
        patterns = tuple(dict.fromkeys(pattern_of(d) for d in domains))
    except ValueError as exc:
        raise ConfigError(f"{where}: allow_domains: {exc}") from None
    level = _level(table.get("level", DEFAULT_LEVEL), where)
    gaps = table.get("landlock_gaps", "refuse")
    if gaps not in LANDLOCK_GAPS:
        raise ConfigError(f'{where}: landlock_gaps must be "refuse" or "accept", got {gaps!r}.')
    return SandboxSettings(level, network, hidden, patterns, sockets, gaps)


def _paths(table: dict, key: str, where: str, example: str) -> tuple[str, ...]:
    paths = table.get(key, [])
    if not isinstance(paths, list) or not all(isinstance(p, str) and p.startswith(("/", "~")) for p in paths):
        raise ConfigError(f"{where}: {key} must be a list of absolute or ~ paths, e.g. {key} = {example}.")
    return tuple(paths)


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
    allow_domains: tuple[str, ...] = ()  # network off: these hosts only, through the proxy (sandbox/proxy.py)
    allow_unix_sockets: tuple[Path, ...] = ()  # empty: no Unix socket can be made (sandbox/seccomp.py)
    landlock_gaps: str = "refuse"  # see SandboxSettings

    @property
    def confined(self) -> bool:
        return self.level != "off"

    @property
    def proxied(self) -> bool:
        """Network off but for the listed hosts, reached through NanoHermes's proxy."""
        return not self.network and bool(self.allow_domains)

    def with_network(self, allowed: bool = True) -> Policy:
        """The same rules with the network on (a command the user allowed to go online)."""
        return replace(self, network=allowed)

    def with_level(self, level: str) -> Policy:
        """The same rules at another level (plan mode's commands: read-only)."""
        writable = (self.temp_dir,) if level == "read-only" else (self.workspace, self.temp_dir)
        return replace(self, level=level, writable=writable)

    def moved(self, workspace: Path, temp_dir: Path, git_dirs: tuple[Path, ...] = ()) -> Policy:
        """The same rules for another workspace (a helper's worktree, resolved): it and `temp_dir` the
        writable roots, its protected wholes and `git_dirs` read-only, the same hidden paths (a worktree
        kept under the hidden state directory shows through: the more specific rule wins)."""
        writable = (temp_dir,) if self.level == "read-only" else (workspace, temp_dir)
        read_only = _unique((*(workspace / p for p in PROTECTED_IN_WORKSPACE), *git_dirs))
        return replace(self, workspace=workspace, temp_dir=temp_dir, writable=writable, read_only=read_only)

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
    git_dirs: tuple[Path, ...] = (),
) -> Policy:
    """The policy for these absolute, resolved paths (pure). Under `read-only` only the temp
    dir is writable; under `off` nothing is confined (the lists are kept for the words).
    `git_dirs`: the git directories `.git` pointer files name (policy_for finds them), read-only
    like `.git` itself."""
    writable = (temp_dir,) if settings.level == "read-only" else (workspace, temp_dir)
    read_only = (*(workspace / p for p in PROTECTED_IN_WORKSPACE), *git_dirs)
    hidden = (*(user_home / p for p in HIDDEN_IN_HOME), state_dir, *_expanded(settings.hidden, user_home))
    sockets = tuple(_expanded(settings.allow_unix_sockets, user_home))
    places = (workspace, temp_dir, state_dir, user_home)  # in Policy's order
    return Policy(
        settings.level,
        settings.network,
        *places,
        writable,
        _unique(read_only),
        _unique((*hidden, *extra_hidden)),
        settings.allow_domains,
        _unique(sockets),
        settings.landlock_gaps,
    )


def _expanded(paths, user_home: Path):
    return (user_home / p[2:] if p.startswith("~/") else user_home if p == "~" else Path(p) for p in paths)


def _unique(paths) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(Path(os.path.normpath(p)) for p in paths))


def make_temp_dir() -> Path:
    """A fresh private temp dir (0700) for one session's commands; the caller removes it at the end."""
    return Path(tempfile.mkdtemp(prefix=TEMP_PREFIX)).resolve()


def policy_for(settings: SandboxSettings, workspace: Path, state_dir: Path, temp_dir: Path | None = None) -> Policy:
    """The policy for this machine: links resolved, $HOME read, the ssh-agent's socket hidden
    (with it a command could sign in to servers as the user), a temp dir made when none is given."""
    agent = os.environ.get("SSH_AUTH_SOCK")
    workspace = Path(workspace).resolve()
    policy = build_policy(
        settings,
        workspace=workspace,
        state_dir=Path(state_dir).expanduser().resolve(),
        user_home=Path.home().resolve(),
        temp_dir=(Path(temp_dir) if temp_dir else make_temp_dir()).resolve(),
        extra_hidden=(Path(agent),) if agent and os.path.isabs(agent) else (),
        git_dirs=git_dirs_of(workspace),
    )
    hidden = _unique(p.resolve() for p in policy.hidden)  # a hidden link hides its target
    return replace(policy, hidden=hidden, allow_unix_sockets=_unique(p.resolve() for p in policy.allow_unix_sockets))


def git_dirs_of(workspace: Path) -> tuple[Path, ...]:
    """What else git reads as this workspace's settings: the git directory a `.git` pointer file
    names (a linked worktree's, and its `commondir`, where hooks and config live), and each
    submodule's `.git` (a pointer file in the workspace that could be turned to a planted git
    directory). Unreadable or odd files add nothing: `.git` itself stays protected."""
    found: list[Path] = []
    pointer = workspace / ".git"
    target = _gitdir_named(pointer, workspace)
    if target is not None:
        found.append(target)
        common = _read_small(target / "commondir", GIT_POINTER_BYTES)
        if common and common.strip():
            found.append((target / common.strip()).resolve())
    modules = _read_small(workspace / ".gitmodules", GITMODULES_BYTES) or ""
    for match in SUBMODULE_PATH.finditer(modules):
        path = Path(os.path.normpath(workspace / match.group(1).strip()))
        if path.is_relative_to(workspace) and path != workspace:
            found.append(path / ".git")
    return tuple(found)


def _gitdir_named(pointer: Path, workspace: Path) -> Path | None:
    text = _read_small(pointer, GIT_POINTER_BYTES) if pointer.is_file() else None
    if not text or not text.startswith("gitdir:"):
        return None
    return (workspace / text[len("gitdir:") :].strip()).resolve()


def _read_small(path: Path, limit: int) -> str | None:
    from nanohermes.fileio import read_regular

    try:
        return read_regular(path, limit).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None
