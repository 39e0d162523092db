"""A custom command's prompt for one turn, for every front end (the REPL, `-p`, ACP).

prompt/commands.py finds the files and fills their placeholders; here their `!` commands run as
their actor may (sandbox/actors.py). A repository's command file (the workspace's .claude/commands
and .nanohermes/commands) is a prompt, never a permission: its `!` commands run as a model's
run_command call runs — the session's rules, mode, saved answers and sandbox decide
(loop/approvals.py): inside the enforced sandbox it asks nothing, outside it asks in the REPL and is
refused in `-p` unless a rule or --yes allows it. The user's own command files (~/.claude/commands,
$NANOHERMES_HOME/commands, Codex's prompts) are theirs: their `!` commands run as the user's `!`
does, with their rights, asking nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nanohermes.errors import ConfigError, ToolError
from nanohermes.prompt.commands import CustomCommand, expand, read_body
from nanohermes.prompt.mentions import Mentions
from nanohermes.repo_files import Boundary
from nanohermes.sandbox.actors import USER, command_policy
from nanohermes.text import valid_unicode

REPOSITORY_DIRS = (".claude", ".nanohermes")  # a workspace's command folders live under these


@dataclass(frozen=True)
class Invocation:
    command: CustomCommand
    arguments: str


def find_invocation(line: str, commands: dict[str, CustomCommand]) -> Invocation | None:
    """`/NAME ARGUMENTS` when NAME is one of `commands`; None for anything else."""
    name, arguments = split_command_line(line)
    found = commands.get(name[1:]) if name.startswith("/") else None
    return Invocation(found, arguments) if found is not None else None


def split_command_line(line: str) -> tuple[str, str]:
    """("/name", the arguments): the name ends at the first space or line break (Alt+Enter)."""
    parts = line.strip().split(maxsplit=1)
    return (parts[0], parts[1].strip()) if len(parts) == 2 else (line.strip(), "")


@dataclass(frozen=True)
class CommandPrompt:
    """The request a command file makes: its text, and the words in it that may name files to attach
    (the user's arguments, the file's own words; never its `!` commands' output)."""

    text: str
    mentions: Mentions


def prompt_for(invocation: Invocation, agent, say: Callable[[str], None]) -> CommandPrompt:
    """The request to send: the file's body with the arguments filled in and its `!` commands' output
    in place of them (a refused one says why, there), expanded once (prompt/commands.py: expand).
    ConfigError when the file cannot be read."""
    command = invocation.command
    try:
        body = read_body(command, Boundary.for_config(agent.config))
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or ("not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else exc)
        raise ConfigError(f"cannot read the command file {command.path}: {reason}") from None
    by_user = not from_repository(command, agent.ctx.workspace)
    run = lambda line: _run(agent, line, f"/{command.name}", say, by_user)  # noqa: E731
    expanded = expand(body, invocation.arguments, run, lambda line: inline_output(run(line)))
    if not by_user:  # a repository's own words name only files .gitignore leaves in (prompt/mentions.py)
        return CommandPrompt(expanded.text, Mentions(invocation.arguments, expanded.authored))
    return CommandPrompt(expanded.text, Mentions(invocation.arguments, expanded.authored, anywhere=True))


def inline_output(text: str) -> str:
    """run_command's text as an inline !`command` reads in the middle of a sentence: its output
    alone, without the `$ command` / `exit code` / `[stdout]` lines (Claude Code's form); a
    failure adds its exit code and stderr in brackets; a command not run keeps its note."""
    lines = text.split("\n")
    if len(lines) < 2 or not lines[0].startswith("$ ") or not lines[1].startswith("exit code "):
        return text  # not run (refused, no sandbox), or interrupted: its own words
    streams: dict[str, list[str]] = {"[stdout]": [], "[stderr]": []}
    current = None
    for line in lines[2:]:
        if line in streams:
            current = line
        elif current is not None:
            streams[current].append(line)
    out, err = ("\n".join(streams[name]).strip("\n") for name in ("[stdout]", "[stderr]"))
    status = lines[1].removeprefix("exit code ")
    failure = "; ".join(filter(None, [f"exit code {status}" if status != "0" else "", f"stderr: {err}" if err else ""]))
    return f"{out} [{failure}]".lstrip() if status != "0" else out or (f"[stderr: {err}]" if err else "")


def from_repository(command: CustomCommand, workspace: Path) -> bool:
    """Whether the file is the workspace's (its actor is the repository), not the user's own."""
    path = Path(os.path.abspath(command.path))  # not resolved: a link in the repository is still the repository's
    roots = {Path(os.path.abspath(workspace)), Path(workspace).resolve()}
    return any(path.is_relative_to(root / part) for root in roots for part in REPOSITORY_DIRS)


def _run(agent, command: str, invoked_by: str, say: Callable[[str], None], by_user: bool = False) -> str:
    """One `!` command: the user's own file's as the user's `!` runs; a repository's decided and run as
    run_command would be. Its output (or why it did not run)."""
    from nanohermes.tools.shell import run_command, run_foreground

    ctx = agent.ctx
    if by_user:
        try:
            output = run_foreground(ctx, command, ctx.command_timeout, command_policy(USER, ctx.sandbox))
        except ToolError as exc:
            say(f"{invoked_by}: `{command}` not run: {exc}")
            return f"[`{command}` was not run: {exc}]"
        code = output.facts.exit_code
        say(f"{invoked_by} ran `{command}` as you" + (f" (exit {code})" if code is not None else ""))
        return ctx.redactor.text(valid_unicode(str(output)))
    refusal = agent.approvals.refusal(run_command, json.dumps({"command": command}), ctx)
    if refusal is not None:
        say(f"{invoked_by}: `{command}` not run: {refusal.splitlines()[0]}")
        return f"[`{command}` was not run: {refusal}]"
    try:
        output = run_command.func(ctx, command=command)
    except ToolError as exc:  # the sandbox cannot be enforced here: nothing ran
        say(f"{invoked_by}: `{command}` not run: {exc}")
        return f"[`{command}` was not run: {exc}]"
    code = output.facts.exit_code
    say(f"{invoked_by} ran `{command}`" + (f" (exit {code})" if code is not None else ""))
    return ctx.redactor.text(valid_unicode(str(output)))
