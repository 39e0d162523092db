"""What an "always" (or "this session") answer covers: a command prefix or an exact command for
run_command, a path for the edit tools, one MCP tool, the whole tool otherwise. Pure: plain
strings in, a Grant out; what a command is made of is permissions/shellwords.py's.

A grant never reaches further than what was approved:
- a prefix grant (`pytest …`, `git status …`) covers only one simple command with that prefix,
  never a chained, substituted or redirected one (`pytest; rm -rf ~`), and never one that only
  an exact grant may cover (destructive programs, runners, options that execute or write);
- a command that names a path outside the workspace (`rm -rf ../victim`, `cat ~/.ssh/id_rsa`)
  rides no grant at all, exact or prefix, and "always" for one grants nothing: it asks each time;
- a command the model asked to run outside the sandbox (`unsandboxed`) gets an exact grant,
  which covers that command outside the sandbox and nothing else; no other grant covers it.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from nanohermes.calls import WRITING_TOOLS
from nanohermes.permissions.shellwords import (
    SUBCOMMAND_PROGRAMS,
    exact_only,
    is_interpreter,
    one_command,
    outside_paths,
    program,
)

COMMAND, EXACT_COMMAND, PATH, TOOL = "command", "exact command", "path", "tool"
MCP_TOOL = "mcp tool"  # one MCP server's tool (`server.tool`): "always" for one never covers another
KINDS = (COMMAND, EXACT_COMMAND, PATH, TOOL, MCP_TOOL)
Resolve = Callable[[str], str]


@dataclass(frozen=True)
class Grant:
    """One "always" (or "this session") answer."""

    kind: str  # COMMAND | EXACT_COMMAND | PATH | TOOL | MCP_TOOL
    scope: str  # the command prefix, the exact command, the path; the tool name for TOOL
    unsandboxed: bool = False  # an exact command grant that covers running it outside the sandbox

    def describe(self) -> str:
        """`run_command pytest …`, `edits to src/x.py`: how /permissions and the prompt name it."""
        if self.kind == COMMAND:
            return f"run_command {self.scope} …"
        if self.kind == EXACT_COMMAND:
            where = ", outside the sandbox" if self.unsandboxed else ""
            return f"run_command exactly{where}: {self.scope}"
        if self.kind == PATH:
            return f"write_file and edit_file on {self.scope}"
        if self.kind == MCP_TOOL:
            return f"MCP tool {self.scope} (any arguments)"
        return f"{self.scope} (any arguments)"


def command_prefix(command: str) -> list[str] | None:
    """The words an "always" for this command covers, or None when only the exact command may be."""
    words = one_command(command)
    if words is None or exact_only(words):
        return None
    if is_interpreter(program(words)):
        if len(words) >= 3 and words[1] == "-m":
            return words[:3]
        if len(words) < 2 or words[1].startswith("-"):
            return None
        return words[:2]
    if program(words) in SUBCOMMAND_PROGRAMS:
        if len(words) < 2 or words[1].startswith("-"):  # `git -C elsewhere push`: too loose to generalise
            return None
        return words[:2]
    return words[:1]


def grant_for(
    tool_name: str,
    args: dict,
    shown_path: str | None = None,
    workspace: str | None = None,
    resolve: Resolve = posixpath.normpath,
) -> Grant | None:
    """What "always" would grant for this call; None when nothing may last (a command naming a
    path outside `workspace`). `shown_path`: the edit's path as resolved."""
    if tool_name == "run_command":
        command = str(args.get("command", "")).strip()
        if outside_paths(command, workspace, resolve):
            return None
        if args.get("unsandboxed"):
            return Grant(EXACT_COMMAND, command, unsandboxed=True)
        prefix = command_prefix(command)
        return Grant(EXACT_COMMAND, command) if prefix is None else Grant(COMMAND, shlex.join(prefix))
    if tool_name in WRITING_TOOLS and (shown_path or args.get("path")):
        return Grant(PATH, shown_path or str(args["path"]))
    if tool_name == "mcp" and args.get("name"):
        return Grant(MCP_TOOL, str(args["name"]).strip())
    return Grant(TOOL, tool_name)


def covers(
    grant: Grant,
    tool_name: str,
    args: dict,
    shown_path: str | None = None,
    workspace: str | None = None,
    resolve: Resolve = posixpath.normpath,
) -> bool:
    if grant.kind == TOOL:
        return grant.scope == tool_name
    if grant.kind == PATH:
        return tool_name in WRITING_TOOLS and (shown_path or args.get("path")) == grant.scope
    if grant.kind == MCP_TOOL:
        return tool_name == "mcp" and str(args.get("name", "")).strip() == grant.scope
    if tool_name != "run_command":
        return False
    command = str(args.get("command", "")).strip()
    if args.get("unsandboxed") and not grant.unsandboxed:
        return False
    if outside_paths(command, workspace, resolve):
        return False
    if grant.kind == EXACT_COMMAND:
        return command == grant.scope
    words = one_command(command)  # a prefix grant: checked again here, whatever its scope says
    if words is None or exact_only(words):
        return False
    prefix = shlex.split(grant.scope)
    return bool(prefix) and words[: len(prefix)] == prefix
