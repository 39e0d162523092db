"""The one rule for every file NanoHermes reads on a repository's behalf: the AGENTS.md chain and
NANOHERMES.md, custom command files, skills' SKILL.md, the files a request names with `@`, what
/init reads and writes, and the workspace's own settings. A cloned repository can hold a symlink
(`.claude/commands/review.md -> ~/.aws/credentials`); read blindly, the target's bytes would go
to the model verbatim.

The rule: the path is resolved (every symlink followed) and refused, with a one-line reason, when
- it lands in a hidden path: the sandbox's hidden list (~/.ssh, ~/.aws, ~/.config/gh, ~/.netrc,
  ~/.gnupg, the ssh-agent's socket, `[sandbox] hidden`) or NanoHermes's state directory but for
  its AGENTS.md, skills/ and commands/, whoever's file it is;
- it is a repository's file (found under the workspace) and leaves the root it was found under
  (the workspace; for an AGENTS.md above the workspace, its own directory), or lands in
  NanoHermes's state directory.
The user's own files (~/.claude/commands, ~/.claude/skills, $NANOHERMES_HOME/skills, …) may live
anywhere, and link anywhere, but into a hidden path.

`Boundary.check` is the rule (a resolved Path, or RefusedFile: an OSError, so a loader that
already skips an unreadable file with a warning names the reason); `read_text` adds a bounded read
of what the check allowed, never following a link swapped in at the last component.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from nanohermes.config import claude_home, codex_home
from nanohermes.fileio import open_regular
from nanohermes.sandbox.policy import HIDDEN_IN_HOME

# A prompt file (AGENTS.md, a skill, a command) is kilobytes; one past this is not one, and read
# whole it would cost memory and time before any cap on what the model gets applies.
MAX_FILE_BYTES = 1 << 20
REPOSITORY, USER = "repository", "user"  # whose file: a repository's (under the workspace), or the user's own
# What of the state directory is read as the user's prompt files; the rest (config.toml with the key,
# sessions, OAuth tokens, checkpoints, saved answers) never is, whatever links lead there. (Claude
# Code's and Codex's directories count too, should CLAUDE_CONFIG_DIR or CODEX_HOME lie inside it.)
STATE_PROMPT_FILES = ("AGENTS.md", "skills", "commands")


class RefusedFile(OSError):
    """The rule refused the file; str(exc) and `strerror` are the one-line reason."""

    def __init__(self, path, reason: str):
        super().__init__(errno.EACCES, reason, str(path))
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@dataclass(frozen=True)
class Boundary:
    """Where a file read for the repository may land. Paths absolute and resolved."""

    workspace: Path
    state_dir: Path
    user_home: Path
    hidden: tuple[Path, ...] = ()
    prompt_dirs: tuple[Path, ...] = ()  # the user's prompt files: the only part of the state directory read

    @classmethod
    def of(cls, home: Path, workspace: Path, extra_hidden: tuple[str, ...] = ()) -> Boundary:
        """The boundary for a session: `home` is NanoHermes's state directory, `extra_hidden` the
        `[sandbox] hidden` paths as written (`~/.kube`, `/srv/secrets`)."""
        user_home = Path.home().resolve()
        state = Path(home).expanduser().resolve()
        agent = os.environ.get("SSH_AUTH_SOCK")
        hidden = [
            *(user_home / p for p in HIDDEN_IN_HOME),
            *(Path(os.path.expanduser(p)) for p in extra_hidden),
            *([Path(agent)] if agent and os.path.isabs(agent) else []),
        ]
        resolved = tuple(dict.fromkeys(_resolved(p) for p in hidden))  # a hidden link hides its target
        prompts = (*(state / name for name in STATE_PROMPT_FILES), _resolved(claude_home()), _resolved(codex_home()))
        return cls(Path(workspace).resolve(), state, user_home, resolved, prompts)

    @classmethod
    def for_config(cls, config) -> Boundary:
        """The boundary of a Config's session: its state directory, workspace and `[sandbox] hidden`."""
        sandbox = getattr(config, "sandbox", None)
        return cls.of(config.home, config.workspace, tuple(getattr(sandbox, "hidden", ()) or ()))

    @classmethod
    def for_tools(cls, ctx) -> Boundary:
        """The boundary of a ToolContext: its state directory and workspace, and its sandbox policy's hidden paths."""
        hidden = tuple(str(p) for p in getattr(ctx.sandbox, "hidden", ()) or ())
        return cls.of(ctx.home, ctx.workspace, hidden)

    def check(self, path: Path, owner: str = REPOSITORY, root: Path | None = None) -> Path:
        """`path` resolved, when the rule allows reading it for `owner`; `root`: where a repository's
        file must stay (default: the workspace). RefusedFile saying why not."""
        path = Path(path)
        try:
            real = path.resolve(strict=False)
        except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before 3.13)
            raise RefusedFile(path, f"cannot resolve {path}: {exc}") from None
        shown = self.shown(real)
        linked = f"{path} is a symlink to {shown}" if real != Path(os.path.abspath(path)) else f"{path}"
        if any(_inside(real, hidden) for hidden in self.hidden):
            raise RefusedFile(path, f"refused: {linked}, a hidden path (credentials NanoHermes never reads)")
        own = any(_inside(real, prompts) for prompts in self.prompt_dirs)
        if _inside(real, self.state_dir) and (owner == REPOSITORY or not own):
            raise RefusedFile(path, f"refused: {linked}, inside NanoHermes's state directory")
        if owner == USER:
            return real
        root = self.workspace if root is None else Path(root).resolve()
        if not _inside(real, root):
            raise RefusedFile(path, f"refused: {linked}, outside {self.shown(root)} where the repository's file is")
        return real

    def shown(self, path: Path) -> str:
        """`~/.ssh/id_rsa` for a path in the user's home, else the path."""
        if _inside(path, self.user_home) and path != self.user_home:
            return "~/" + path.relative_to(self.user_home).as_posix()
        return str(path)

    def read_bytes(self, path: Path, owner: str = REPOSITORY, root: Path | None = None) -> bytes:
        """The bytes of a file the rule allows, at most MAX_FILE_BYTES (over it: RefusedFile);
        NotRegularFile for a FIFO or device; FileNotFoundError when it is missing."""
        if not os.path.lexists(path):  # missing is silent, as it always was: no rule to state
            raise FileNotFoundError(errno.ENOENT, "no such file", str(path))
        real = self.check(path, owner, root)
        with open_regular(real, follow_symlinks=False) as f:  # the last component swapped for a link: ELOOP
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise RefusedFile(path, f"refused: {path} is over {MAX_FILE_BYTES:,} bytes, too big for a prompt file")
        return data

    def read_text(self, path: Path, owner: str = REPOSITORY, root: Path | None = None) -> str:
        """read_bytes as UTF-8 text; UnicodeDecodeError when it is not."""
        return self.read_bytes(path, owner, root).decode("utf-8")


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.normpath(path))
