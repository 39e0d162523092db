"""What an "always" answer covers: a command prefix for run_command, a path for the edit
tools, the whole tool otherwise. Pure: plain strings in, a Grant out.

A prefix grant must never let a second command ride along: a command that chains,
substitutes or redirects (`pytest; rm -rf ~`, `pytest $(curl …)`) is covered only by a grant
for exactly that command, and programs that run other programs (`bash -c`, `sudo`, `xargs`)
get exact grants too.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass

from nanohermes.calls import WRITING_TOOLS

COMMAND, EXACT_COMMAND, PATH, TOOL = "command", "exact command", "path", "tool"
MCP_TOOL = "mcp tool"  # one MCP server's tool (`server.tool`): "always" for one never covers another
# Chaining, pipes, substitution, redirection, subshells: anything that can hide a second
# command (or a write) behind an approved prefix. Quoted ones count too: asking is cheap.
SHELL_METACHARS = frozenset(";&|`$<>()\n\r")
# Programs whose second word is a subcommand with its own risk (`git status` vs `git push`).
SUBCOMMAND_PROGRAMS = frozenset(
    {
        "git",
        "npm",
        "pnpm",
        "yarn",
        "cargo",
        "go",
        "uv",
        "pip",
        "pip3",
        "poetry",
        "docker",
        "kubectl",
        "make",
        "gh",
        "dotnet",
        "bundle",
        "just",
        "npx",
        "rustup",
        "brew",
        "apt",
        "conda",
    }
)
# Interpreters run whatever their script says: the script (or `-m module`) is the program,
# and inline code (`python3 -c …`, `node -e …`) is granted only exactly.
INTERPRETERS = frozenset({"python", "python3", "node", "ruby", "perl", "php", "deno", "bun", "Rscript", "lua"})
# Programs that run whatever their arguments say: a prefix grant would cover any command.
WRAPPERS = frozenset(
    {
        "bash",
        "sh",
        "zsh",
        "dash",
        "fish",
        "sudo",
        "doas",
        "env",
        "xargs",
        "eval",
        "exec",
        "nohup",
        "time",
        "timeout",
        "nice",
        "watch",
        "ssh",
        "su",
        "command",
        "builtin",
        "source",
        ".",
    }
)


@dataclass(frozen=True)
class Grant:
    """One "always" answer of this conversation."""

    kind: str  # COMMAND | EXACT_COMMAND | PATH | TOOL
    scope: str  # the command prefix, the exact command, the path; the tool name for TOOL

    def describe(self) -> str:
        """`run_command pytest …`, `edits to src/x.py`: how /permissions and the prompt name it."""
        if self.kind == COMMAND:
            return f"run_command {self.scope} …"
        if self.kind == EXACT_COMMAND:
            return f"run_command exactly: {self.scope}"
        if self.kind == PATH:
            return f"write_file and edit_file on {self.scope}"
        if self.kind == MCP_TOOL:
            return f"MCP tool {self.scope} (any arguments)"
        return f"{self.scope} (any arguments)"


def _words(command: str) -> list[str] | None:
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


def command_prefix(command: str) -> list[str] | None:
    """The words an "always" for this command covers, or None when only the exact command may be."""
    words = _words(command)
    if words is None:
        return None
    program = os.path.basename(words[0])
    if program in WRAPPERS:
        return None
    if program in INTERPRETERS or program.startswith("python3."):
        if len(words) >= 3 and words[1] == "-m":
            return words[:3]
        if len(words) < 2 or words[1].startswith("-"):
            return None
        return words[:2]
    if program in SUBCOMMAND_PROGRAMS:
        if len(words) < 2 or words[1].startswith("-"):  # `git -C elsewhere push`: too loose to generalise
            return None
        return words[:2]
    return words[:1]


def grant_for(tool_name: str, args: dict, shown_path: str | None = None) -> Grant:
    """What "always" would grant for this call. `shown_path`: the edit's path as resolved."""
    if tool_name == "run_command":
        command = str(args.get("command", "")).strip()
        prefix = command_prefix(command)
        return Grant(EXACT_COMMAND, command) if prefix is None else Grant(COMMAND, shlex.join(prefix))
    if tool_name in WRITING_TOOLS and (shown_path or args.get("path")):
        return Grant(PATH, shown_path or str(args["path"]))
    if tool_name == "mcp" and args.get("name"):
        return Grant(MCP_TOOL, str(args["name"]).strip())
    return Grant(TOOL, tool_name)


def covers(grant: Grant, tool_name: str, args: dict, shown_path: str | None = None) -> bool:
    if grant.kind == TOOL:
        return grant.scope == tool_name
    if grant.kind == PATH:
        return tool_name in WRITING_TOOLS and (shown_path or args.get("path")) == grant.scope
    if grant.kind == MCP_TOOL:
        return tool_name == "mcp" and str(args.get("name", "")).strip() == grant.scope
    if tool_name != "run_command":
        return False
    command = str(args.get("command", "")).strip()
    if grant.kind == EXACT_COMMAND:
        return command == grant.scope
    words = _words(command)
    if words is None or os.path.basename(words[0]) in WRAPPERS:
        return False
    prefix = shlex.split(grant.scope)
    return words[: len(prefix)] == prefix
