"""Custom slash commands: Markdown prompt files a person runs as `/NAME ARGUMENTS`, as Claude Code,
Codex, OpenCode and Gemini CLI users write them.

Where they are read, lowest precedence first (a later file of the same name wins):
Codex's `$CODEX_HOME/prompts/*.md` (as `/prompts:NAME`, Codex's own spelling), Claude Code's
`~/.claude/commands/`, `$NANOHERMES_HOME/commands/`, then the workspace's `.claude/commands/` and
`.nanohermes/commands/`. A subfolder is a namespace: `git/commit.md` is `/git:commit`. A file named
as a built-in command is skipped with a warning: a built-in is never shadowed.

Front matter (YAML, prompt/frontmatter.py): `description` and `argument-hint` show in /help and the
completion menu (without a description, the body's first line does). `model` and `allowed-tools` are
read and not acted on: a command file is a prompt, never a permission, so `allowed-tools` cannot widen
what the rules allow, and narrowing the tools for one turn would change the tool list that every
request's cached prefix holds; the names in `model` are Claude's or OpenAI's, which a local endpoint
does not serve (/model switches).

The body: `$ARGUMENTS` (all of them), `$1`…`$9` (shell-style words), `$$` (a dollar), Codex's `$NAME`
filled by a `NAME=value` argument; arguments given to a body that uses none follow it on an
`ARGUMENTS:` line (Claude Code's habit). `!command` lines and Claude Code's inline !`command` are
found here (`expand_shell`) and run by nanohermes/custom_commands.py under the session's approvals
and sandbox; `@path` words stay in the text and are attached as any request's are (prompt/mentions.py).

Discovery and substitution are plain functions; `available_commands` is what an editor lists (ACP).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from nanohermes.config import claude_home, codex_home, home_dir
from nanohermes.prompt.frontmatter import FrontMatterError, parse_front_matter, split_front_matter, text_value
from nanohermes.repo_files import REPOSITORY, USER, Boundary
from nanohermes.text import neutralize

COMMAND_SUFFIX = ".md"
MAX_COMMANDS_PER_DIR = 200  # a directory holding more is not a command collection; start-up stays fast
MAX_BODY_CHARS = 20_000  # same cap as a skill's body: one command may not swamp the window
MAX_DESCRIPTION_CHARS = 120  # one menu line beside the name
MAX_HINT_CHARS = 40  # the hint sits in /help's name column: a long one would squeeze every description
MAX_SHELL_COMMANDS = 10  # `!` commands one file may run; past this they are left as text, with a note
CODEX_NAMESPACE = "prompts"  # Codex runs ~/.codex/prompts/NAME.md as /prompts:NAME
_NAME_PART = re.compile(r"^[\w.-]+$")
_PLACEHOLDER = re.compile(r"\$(\$|ARGUMENTS\b|[1-9]|[A-Z][A-Z0-9_]*)")
_NAMED_ARGUMENT = re.compile(r"^([A-Z][A-Z0-9_]*)=(.*)$", re.DOTALL)
# A line `!command` (the REPL's habit; not a Markdown image `![…]`) or Claude Code's inline !`command`.
_SHELL = re.compile(r"^!(?![`\[])[ \t]*(?P<line>\S[^\n]*)$|!`(?P<inline>[^`\n]+)`", re.MULTILINE)


@dataclass(frozen=True)
class CustomCommand:
    name: str  # without the slash: "review", "git:commit", "prompts:draft"
    description: str
    argument_hint: str
    path: Path
    model: str = ""  # read, not acted on (the module says why)
    allowed_tools: str = ""  # read, not acted on: a command file never widens what is allowed
    owner: str = USER  # repo_files.REPOSITORY for the workspace's: read by the repository's rule, its @ words bounded

    @property
    def usage(self) -> str:
        return f"/{self.name}" + (f" {self.argument_hint}" if self.argument_hint else "")

    def shown_path(self, workspace: Path) -> str:
        """The file as a person reads it: relative to the workspace, or to the home directory."""
        for base, prefix in ((Path(workspace), ""), (Path.home(), "~/")):
            try:
                return prefix + self.path.relative_to(base).as_posix()
            except ValueError:
                continue
        return str(self.path)


def command_dirs(home: Path, workspace: Path) -> list[tuple[Path, str, str]]:
    """(directory, namespace its files get ("" for none), whose files they are) lowest precedence first."""
    workspace = Path(workspace)
    return [
        (codex_home() / "prompts", CODEX_NAMESPACE, USER),
        (claude_home() / "commands", "", USER),
        (Path(home) / "commands", "", USER),
        (workspace / ".claude" / "commands", "", REPOSITORY),
        (workspace / ".nanohermes" / "commands", "", REPOSITORY),
    ]


def command_from_text(text: str, path: Path, name: str) -> CustomCommand:
    """The command a file describes; FrontMatterError when its front matter is not YAML."""
    meta, body = parse_front_matter(text)
    description = text_value(meta, "description") or next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
    description = neutralize(description)  # ESC or BEL in a repository's words never reach a screen raw
    if len(description) > MAX_DESCRIPTION_CHARS:
        description = description[: MAX_DESCRIPTION_CHARS - 1] + "…"
    hint = meta.get("argument-hint")
    if isinstance(hint, list):  # `argument-hint: [file]` is a YAML list; its writer meant the brackets
        hint = " ".join(f"[{text_value({'v': item}, 'v')}]" for item in hint)
    argument_hint = neutralize(text_value({"v": hint}, "v"))
    if len(argument_hint) > MAX_HINT_CHARS:
        argument_hint = argument_hint[: MAX_HINT_CHARS - 1] + "…"
    return CustomCommand(
        name, description, argument_hint, path, text_value(meta, "model"), text_value(meta, "allowed-tools")
    )


def _files(root: Path, namespace: str) -> Iterable[tuple[str, Path]]:
    """(command name, file) under `root`; Codex's prompts directory is read one level deep, as Codex does."""
    pattern = f"*{COMMAND_SUFFIX}" if namespace == CODEX_NAMESPACE else f"**/*{COMMAND_SUFFIX}"
    for path in sorted(root.glob(pattern)):
        parts = [*path.relative_to(root).parent.parts, path.name[: -len(COMMAND_SUFFIX)]]
        yield ":".join([namespace, *parts] if namespace else parts), path


def discover_commands(
    home: Path, workspace: Path, reserved: Iterable[str] = (), boundary: Boundary | None = None
) -> tuple[dict[str, CustomCommand], list[str]]:
    """Every command file, by name (sorted), and warnings: a file the repository-file rule refuses
    (repo_files.py), unreadable, not UTF-8, with front matter that is not bounded YAML, a name that
    cannot be typed, or a built-in's name (`reserved`, with or without the slash) is skipped, named,
    with the reason."""
    taken = {name.lstrip("/") for name in reserved}
    boundary = boundary or Boundary.of(home, workspace)
    found: dict[str, CustomCommand] = {}
    warnings: list[str] = []
    for root, namespace, owner in command_dirs(home, workspace):
        try:
            files = list(_files(root, namespace)) if root.is_dir() else []
        except OSError as exc:
            warnings.append(f"skipped commands in {root}: {exc.strerror or exc}")
            continue
        if len(files) > MAX_COMMANDS_PER_DIR:
            warnings.append(f"read the first {MAX_COMMANDS_PER_DIR} of {len(files)} command files in {root}")
        for name, path in files[:MAX_COMMANDS_PER_DIR]:
            problem = _unusable(name, taken)
            if problem:
                warnings.append(f"skipped command {path}: {problem}")
                continue
            try:
                text = boundary.read_text(path, owner, Path(workspace))
                found[name] = replace(command_from_text(text, path, name), owner=owner)
            except UnicodeDecodeError:
                warnings.append(f"skipped command {path}: not UTF-8 text")
            except OSError as exc:
                warnings.append(f"skipped command {path}: {exc.strerror or exc}")
            except FrontMatterError as exc:
                warnings.append(f"skipped command {path}: {exc}")
    return dict(sorted(found.items())), warnings


def _unusable(name: str, taken: set[str]) -> str:
    if not all(_NAME_PART.match(part) for part in name.split(":")):
        return "its name has characters a command name cannot have (letters, digits, . _ - only)"
    if name in taken:
        return f"/{name} is a built-in command, which a file never replaces"
    return ""


def available_commands(home: Path, workspace: Path, reserved: Iterable[str] = ()) -> list[tuple[str, str, str]]:
    """(name, description, argument hint) of every custom command, sorted by name: what a front end
    lists (an editor's available commands over ACP). Skipped files are left out silently here."""
    commands, _ = discover_commands(home, workspace, reserved)
    return [(c.name, c.description, c.argument_hint) for c in commands.values()]


def read_body(command: CustomCommand, boundary: Boundary | None = None) -> str:
    """The file's body, read fresh (edited since start-up: the new text) by the repository-file rule,
    without its front matter, capped at MAX_BODY_CHARS with a note. OSError (RefusedFile: a link the
    rule refuses) or UnicodeDecodeError when it cannot be read."""
    boundary = boundary or Boundary.of(home_dir(), Path.cwd())
    _, body = split_front_matter(boundary.read_text(command.path, command.owner))
    if len(body) > MAX_BODY_CHARS:
        body = (
            body[:MAX_BODY_CHARS] + f"\n… command truncated ({len(body) - MAX_BODY_CHARS} more chars in {command.path})"
        )
    return body


def split_arguments(arguments: str) -> list[str]:
    """Shell-style words (quotes group); an unbalanced quote splits on whitespace instead."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


@dataclass(frozen=True)
class Arguments:
    """What follows `/NAME`: all of it, its shell-style words that are positional, and Codex's NAME=value ones."""

    text: str
    positional: tuple[str, ...] = ()
    named: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, arguments: str, body: str) -> Arguments:
        """NAME=value fills $NAME when `body` has it (Codex); any other word is positional."""
        arguments = arguments.strip()
        named: dict[str, str] = {}
        positional: list[str] = []
        for word in split_arguments(arguments):
            match = _NAMED_ARGUMENT.match(word)
            if match is not None and f"${match.group(1)}" in body:
                named[match.group(1)] = match.group(2)
            else:
                positional.append(word)
        return cls(arguments, tuple(positional), tuple(named.items()))

    def words(self, key: str) -> list[str] | None:
        """The words a placeholder stands for (None: it is no placeholder of these arguments)."""
        if key == "ARGUMENTS":
            return split_arguments(self.text)
        if key.isdigit():
            index = int(key) - 1
            return [self.positional[index]] if index < len(self.positional) else []
        return [value for name, value in self.named if name == key] or None

    def prose(self, key: str) -> str | None:
        """A placeholder's text in the prompt's prose: the arguments as typed, or the one word."""
        words = self.words(key)
        return self.text if key == "ARGUMENTS" else None if words is None else " ".join(words)


def _filled(text: str, arguments: Arguments, shell: bool) -> tuple[str, bool]:
    """`text` with its placeholders filled (`shell`: quoted for the quotes each one sits in, so
    each argument is one shell word, never a new command or line), and whether any was used."""
    states = _quote_states(text) if shell else []
    used = False

    def fill(match: re.Match) -> str:
        nonlocal used
        key = match.group(1)
        if key == "$":
            return "$"
        words = arguments.words(key)
        if words is None:
            return match.group(0)  # `$HOME` in a shell snippet stays as written
        used = True
        return _shell_quoted(words, states[match.start()]) if shell else arguments.prose(key) or ""

    return _PLACEHOLDER.sub(fill, text), used


def _quote_states(line: str) -> list[str | None]:
    """For each character of a shell line, the quote it sits in before it: None, "'" or '"'."""
    states: list[str | None] = []
    state, escaped = None, False
    for char in line:
        states.append(state)
        if state == "'":
            state = None if char == "'" else state
        elif escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif state == '"':
            state = None if char == '"' else state
        elif char in "'\"":
            state = char
    return states


def _shell_quoted(words: list[str], quote: str | None) -> str:
    """Words as the shell reads them where they land: each one word outside quotes; inside double
    or single quotes, text those quotes keep (nothing they hold can close them). Line breaks in an
    argument become spaces: an argument never adds a line to a command."""
    words = [" ".join(word.splitlines()) for word in words]
    if quote is None:
        return " ".join(shlex.quote(word) for word in words)
    joined = " ".join(words)
    if quote == '"':
        return re.sub(r'([\\"$`])', r"\\\1", joined)
    return joined.replace("'", "'\\''")


def substitute(body: str, arguments: str) -> str:
    """`body` with its placeholders filled from `arguments` (the module says which), as prose;
    arguments given to a body that has no placeholder follow it on an `ARGUMENTS:` line, so none is lost."""
    args = Arguments.of(arguments, body)
    text, used = _filled(body, args, shell=False)
    return text + (f"\n\nARGUMENTS: {args.text}" if args.text and not used else "")


@dataclass(frozen=True)
class Expanded:
    """A command file's prompt for one run."""

    text: str  # what the model gets
    ran: int  # `!` commands run
    authored: str  # the file's own words, without its `!` commands and placeholders: where it may name files


def expand(
    body: str, arguments: str, run: Callable[[str], str], run_inline: Callable[[str], str] | None = None
) -> Expanded:
    """The prompt of `body` run with `arguments`, in one pass over the file as written: placeholders
    in its prose filled as text, in its `!` commands shell-quoted (_shell_quoted), and each `!`
    command (at most MAX_SHELL_COMMANDS, the rest left as written with a note) replaced by what
    `run(command)` returns (`run_inline(command)` for Claude Code's inline form, when given) — which
    is never read again, for placeholders, `!` commands or `@` names. Arguments given to a body that
    uses none follow it on an `ARGUMENTS:` line."""
    args = Arguments.of(arguments, body)
    parts: list[str] = []
    at, count, used = 0, 0, False
    for match in _SHELL.finditer(body):
        prose, filled = _filled(body[at : match.start()], args, shell=False)
        parts.append(prose)
        used |= filled
        count += 1
        command, filled = _filled((match.group("line") or match.group("inline")).strip(), args, shell=True)
        used |= filled
        runner = run_inline if match.group("inline") is not None and run_inline is not None else run
        parts.append(runner(command) if count <= MAX_SHELL_COMMANDS else match.group(0))
        at = match.end()
    prose, filled = _filled(body[at:], args, shell=False)
    text = "".join([*parts, prose]) + (f"\n\nARGUMENTS: {args.text}" if args.text and not (used or filled) else "")
    if count > MAX_SHELL_COMMANDS:
        left = count - MAX_SHELL_COMMANDS
        text += f"\n\n[{left} more `!` commands of this command file were not run (at most {MAX_SHELL_COMMANDS})]"
    authored = _PLACEHOLDER.sub("", _SHELL.sub("", body))
    return Expanded(text, min(count, MAX_SHELL_COMMANDS), authored)


def expand_shell(
    text: str, run: Callable[[str], str], run_inline: Callable[[str], str] | None = None
) -> tuple[str, int]:
    """`text` with each `!command` line and inline !`command` replaced by what `run(command)` returns
    (`run_inline(command)` for the inline form, when given), in the order written, at most
    MAX_SHELL_COMMANDS (the rest stay as written, a note after them); and how many were run.
    (expand() does this and the arguments together, as a command file runs.)"""
    expanded = expand(text.replace("$", "$$"), "", run, run_inline)
    return expanded.text, expanded.ran
