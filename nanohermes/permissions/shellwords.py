"""What a shell command is made of, for grants and rules. Pure: strings in, plain data out.

Three questions, each answered on the safe side (an answer that makes NanoHermes ask is always
allowed to be wrong; one that lets a call run unasked is not):
- `one_command`: the words of one simple command, or None when the text could hide a second
  command, a substitution or a redirection (`pytest; rm -rf ~`, `pytest $(curl …)`).
- `exact_only`: a command that only an exact grant may cover, because a prefix would reach
  further than what was approved: destructive programs (`rm`, `mv`, `dd`, `git clean` …),
  programs that run other programs (`uv run`, `xargs`, `setsid` …), and options that execute
  or write (`find -exec`, `sed -i`, `rg --pre`, `tar -x`, `-o FILE` …).
- `outside_paths`: the words that name a path outside the workspace. A word names a path when,
  after an option's `--name=` / `key=` / `-X` part is taken off, it starts with `/` or `~`,
  holds a `$` (a variable can be any path), or is relative and climbs out with `..` once
  joined to the workspace and normalised. Sed addresses (`/re/p`) and URLs with `..` count too:
  that only makes NanoHermes ask. A symlink inside the workspace that points out is seen when
  the caller passes a `resolve` that follows links (approvals does); the pure default is lexical.
"""

from __future__ import annotations

import os
import posixpath
import re
import shlex
from collections.abc import Callable

# Chaining, pipes, substitution, redirection, subshells: anything that can hide a second
# command (or a write) behind an approved prefix. Quoted ones count too: asking is cheap.
SHELL_METACHARS = frozenset(";&|`$<>()\n\r")
# Programs whose second word is a subcommand with its own risk (`git status` vs `git push`).
SUBCOMMAND_PROGRAMS = frozenset(
    "git npm pnpm yarn cargo go uv pip pip3 poetry docker kubectl make gh dotnet bundle just rustup brew apt "
    "apt-get conda gem pipenv pdm hatch bun deno".split()
)
# Interpreters run whatever their script says: the script (or `-m module`) is the program,
# and inline code (`python3 -c …`, `node -e …`) is granted only exactly.
INTERPRETERS = frozenset({"python", "python3", "node", "ruby", "perl", "php", "Rscript", "lua"})
# Programs that run whatever their arguments say (shells, privilege, process wrappers, tracers,
# editors with a shell escape, one-off package runners): a prefix would cover any command.
RUNNERS = frozenset(
    "bash sh zsh dash fish ksh csh tcsh busybox sudo doas su env xargs parallel eval exec nohup time timeout nice "
    "ionice chrt taskset stdbuf setsid flock watch entr unbuffer script strace ltrace gdb valgrind chroot unshare "
    "nsenter firejail bwrap sandbox-exec ssh command builtin source . npx uvx bunx pipx vim vi nvim emacs "
    "tmux screen expect".split()
)
# Programs whose argument is a program in their own language (awk's system(), sqlite3's
# .shell, a SQL client's \\!): any two calls differ in what they run.
INLINE_CODE = frozenset("awk gawk mawk nawk sqlite3 psql mysql tclsh osascript pwsh powershell bc dc".split())
# Programs that delete, overwrite or change files, permissions or processes by design; network
# clients, whose destination and payload are arguments. Exact grants only.
DESTRUCTIVE = frozenset(
    "rm rmdir unlink mv cp install ln link chmod chown chgrp chattr setfacl dd truncate shred wipefs mkfs "
    "fdisk sfdisk parted mkswap tee sponge rsync kill pkill killall curl wget nc ncat netcat socat scp sftp ftp "
    "telnet".split()
)
# `program subcommand` pairs that run other programs (installers run packages' build scripts)
# or destroy: a prefix grant for them would cover any package, image or command.
RISKY_SUBCOMMANDS = {
    "git": frozenset(
        "clean restore rm mv checkout filter-branch filter-repo reflog update-ref gc prune config "
        "bisect submodule difftool mergetool rebase worktree".split()
    ),
    "uv": frozenset({"run", "pip", "add", "tool", "sync"}),
    "poetry": frozenset({"run", "add", "install"}),
    "pipenv": frozenset({"run", "install"}),
    "pdm": frozenset({"run", "add", "install"}),
    "hatch": frozenset({"run"}),
    "bundle": frozenset({"exec", "install", "add"}),
    "npm": frozenset({"exec", "x", "install", "i", "add", "ci", "explore", "uninstall"}),
    "pnpm": frozenset({"dlx", "exec", "add", "install", "i"}),
    "yarn": frozenset({"dlx", "exec", "add", "install"}),
    "bun": frozenset({"x", "add", "install", "i"}),
    "pip": frozenset({"install", "download", "uninstall"}),
    "pip3": frozenset({"install", "download", "uninstall"}),
    "gem": frozenset({"install", "exec"}),
    "cargo": frozenset({"install"}),
    "go": frozenset({"run", "install", "get", "generate"}),
    "conda": frozenset({"run", "install"}),
    "brew": frozenset({"install", "uninstall"}),
    "apt": frozenset({"install", "remove", "purge"}),
    "apt-get": frozenset({"install", "remove", "purge"}),
    "docker": frozenset({"run", "exec", "rm", "rmi", "kill", "system", "volume", "compose"}),
    "kubectl": frozenset({"exec", "delete", "apply", "run", "replace", "patch"}),
    "deno": frozenset({"run", "eval", "install"}),
    "gh": frozenset({"api", "extension"}),
}
# `git stash drop`, `git remote remove`, …: the third word destroys.
GIT_DESTROYING_ACTIONS = frozenset({"drop", "clear", "pop", "remove", "rm", "set-url", "delete"})
# Options that execute, write or widen, for any program (GNU tools take any unambiguous
# prefix of a long option, so `--out` is read as a prefix of each of these).
WRITING_OPTIONS = ("--output", "--output-file", "--output-document", "--log-file", "--logfile")
WRITING_SHORT = frozenset({"-o", "-O"})
# Options that execute or destroy, per program (`git` options are read for every subcommand).
RISKY_OPTIONS = {
    "find": ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"),
    "rg": ("--pre",),
    "fd": ("-x", "-X", "--exec", "--exec-batch"),
    "fdfind": ("-x", "-X", "--exec", "--exec-batch"),
    "make": ("--eval", "-E"),
    "git": (
        "-c", "--hard", "--merge", "--keep", "--force", "-f", "--force-with-lease", "--mirror", "--delete", "-d",
        "-D", "-M", "--upload-pack", "--receive-pack", "--exec", "-x", "--extcmd", "--ext-diff",
        "--open-files-in-pager", "--prune", "--textconv",
    ),
}  # fmt: skip
# sed reads and prints unless it is given a script that writes or runs (`w`, `e`, `-i`): only
# address-and-print scripts (`-n 10,20p`) may ride a prefix grant, everything else is exact.
SED_READ_OPTIONS = frozenset({"-n", "--quiet", "--silent", "-E", "-r", "--regexp-extended", "-s", "-u", "-z"})
SED_PRINT_SCRIPT = re.compile(r"^\s*((\d+|\$)(\s*,\s*(\d+|\$))?)?\s*[pd=]?\s*$")
# tar only lists (`tar -tzf a.tgz`) when every letter and long option is one of these.
TAR_LIST_LETTERS = frozenset("tvfzjJa")
TAR_LIST_LONG = frozenset(
    {"--list", "--file", "--verbose", "--gzip", "--gunzip", "--bzip2", "--xz", "--zstd", "--auto-compress"}
)
# Paths outside the workspace that name nothing a command could harm or read.
HARMLESS_PATHS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin"})
# Control operators between the simple commands of a command line (for deny and ask rules).
COMMAND_SEPARATORS = re.compile(r"\|\||&&|[;&|\n\r]|\$\(|`|\(|\)")


def one_command(command: str) -> list[str] | None:
    """The command's words, or None when it is not one simple command."""
    if any(c in SHELL_METACHARS for c in command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes
        return None
    if not words or "=" in words[0]:  # `LD_PRELOAD=x pytest` is not plain pytest
        return None
    return words


def program(words: list[str]) -> str:
    return os.path.basename(words[0])


def exact_only(words: list[str]) -> bool:
    """Whether only an exact grant may cover this simple command (the module says why)."""
    name = program(words)
    if name in RUNNERS or name in DESTRUCTIVE or name in INLINE_CODE or name.startswith("mkfs."):
        return True
    sub = words[1] if len(words) > 1 else ""
    if sub in RISKY_SUBCOMMANDS.get(name, ()):
        return True
    if is_interpreter(name) and sub == "-m" and len(words) > 2 and exact_only(words[2:]):
        return True  # `python3 -m pip install x` is pip's install
    if name == "git" and _git_destroys(sub, words[2:]):
        return True
    if name == "sed":
        return not _sed_only_prints(words[1:])
    if name == "tar":
        return not _tar_only_lists(words[1:])
    return any(_risky_option(name, word) for word in words[1:])


def is_interpreter(name: str) -> bool:
    return name in INTERPRETERS or name.startswith("python3.")


def _git_destroys(sub: str, rest: list[str]) -> bool:
    if sub == "push" and any(w.startswith(("+", ":")) for w in rest):
        return True  # `git push origin +main` forces, `origin :main` deletes
    return sub in ("stash", "remote", "branch", "tag") and rest[:1] != [] and rest[0] in GIT_DESTROYING_ACTIONS


def _risky_option(name: str, word: str) -> bool:
    option = word.split("=", 1)[0]
    if option in WRITING_SHORT or (option.startswith("-o") and not option.startswith("--") and len(option) > 2):
        return True  # -o FILE, -oFILE
    if option.startswith("--") and len(option) > 2 and any(long.startswith(option) for long in WRITING_OPTIONS):
        return True
    risky = RISKY_OPTIONS.get(name, ())
    if option in risky:
        return True
    return option.startswith("--") and len(option) > 3 and any(r.startswith(option) for r in risky if r[:2] == "--")


def _sed_only_prints(args: list[str]) -> bool:
    scripts = [a for a in args if not a.startswith("-")]
    options = [a for a in args if a.startswith("-")]
    return bool(scripts) and all(o in SED_READ_OPTIONS for o in options) and bool(SED_PRINT_SCRIPT.match(scripts[0]))


def _tar_only_lists(args: list[str]) -> bool:
    letters: set[str] = set()
    for i, arg in enumerate(args):
        if arg.startswith("--"):
            if arg.split("=", 1)[0] not in TAR_LIST_LONG:
                return False
        elif arg.startswith("-"):
            letters |= set(arg[1:])
        elif i == 0:  # old style: `tar tzf a.tgz`
            letters |= set(arg)
    long_list = any(a == "--list" for a in args)
    return ("t" in letters or long_list) and letters <= TAR_LIST_LETTERS


def rough_words(command: str) -> list[str]:
    """Every word of any command line, simple or not, with quotes taken off where they balance:
    enough to find the paths it names (metacharacters split words; a quoted word that is a
    command line itself, `bash -c 'rm ../x'`, adds its own words)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:  # unbalanced quotes: split on what is left
        words = command.replace('"', " ").replace("'", " ").split()
    words = [w for piece in words for w in re.split(r"[`\n\r]", piece) if w]
    return words + [inner for w in words if len(w.split()) > 1 for inner in rough_words(w)]


def outside_paths(
    command: str, workspace: str | None = None, resolve: Callable[[str], str] = posixpath.normpath
) -> list[str]:
    """The words of `command` that name a path outside `workspace` (the module says how);
    `resolve` turns an absolute path into the one it names (default: lexical)."""
    root = resolve(workspace) if workspace else "/\0workspace"  # unknown: every absolute path is outside
    return [w for w in rough_words(command) if any(_outside(c, root, resolve) for c in _path_candidates(w))]


def _path_candidates(word: str) -> list[str]:
    """The word, what follows its first `=` (`--file=/x`, `of=/x`), and a short option's value (`-C/x`)."""
    found = [word]
    if "=" in word:
        found.append(word.split("=", 1)[1])
    if word.startswith("-") and not word.startswith("--") and len(word) > 2:
        found.append(word[2:])
    return found


def _outside(candidate: str, root: str, resolve: Callable[[str], str]) -> bool:
    if candidate.startswith("~") or "$" in candidate:
        return True
    if candidate in HARMLESS_PATHS:
        return False
    target = resolve(posixpath.join(root, candidate))  # an absolute candidate stays itself
    return not (target == root or target.startswith(root.rstrip("/") + "/"))


def simple_commands(command: str) -> list[str]:
    """Each simple command a command line may run, for deny and ask rules: the pieces between
    control operators, each with the words before it dropped one by one (`sudo rm -rf x` holds
    `rm -rf x`), a program named by its path also by its name (`/bin/rm x` holds `rm x`), and
    quoted words that are commands themselves (`bash -c 'rm -rf x'`)."""
    found: list[str] = []
    for piece in COMMAND_SEPARATORS.split(command):
        words = rough_words(piece)
        for i in range(len(words)):
            found.append(" ".join(words[i:]))
            name = words[i].rstrip("/").rsplit("/", 1)[-1].lstrip("\\")  # /bin/rm, ./rm, \rm: the program rm
            if name and name != words[i]:
                found.append(" ".join([name, *words[i + 1 :]]))
        found += [inner for w in words if len(w.split()) > 1 for inner in simple_commands(w)]
    return [f.strip() for f in found if f.strip()]
