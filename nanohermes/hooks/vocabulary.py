"""Tool names in two vocabularies, and what a hook's matcher takes (pure).

A hook written for Claude Code names Claude's tools (`Bash`, `Edit|Write`, `mcp__github__.*`);
NanoHermes's own hooks name NanoHermes's (`run_command`, `edit_file`, `mcp:github.search`). A
matcher is tried on every name a call goes by, NanoHermes's and Claude's, so either vocabulary
works in either file. The name that matched is the name the hook is told (`tool_name`): a hook
whose matcher said `Bash` reads `"tool_name": "Bash"`, as its script expects.

Two matcher grammars:
- config.toml's: a regex the whole name must match (absent, "" or "*": every tool).
- Claude Code's settings files: "*", "" or absent match all; a matcher of only letters, digits,
  `_`, `-`, spaces, `,` and `|` is a list of exact names (`Edit|Write`, `Edit, Write`); anything
  else is a regex that may match anywhere in the name (JavaScript's RegExp.test), so `Edit.*` also
  takes `NotebookEdit` there, and `^Edit$` pins it.
"""

from __future__ import annotations

import re

# NanoHermes's tool -> the Claude Code tools it stands for (the first is the one a hook is told
# when its matcher took every tool). Claude's Task tool is called Agent since 2.1; both still appear.
CLAUDE_NAMES: dict[str, tuple[str, ...]] = {
    "run_command": ("Bash",),
    "edit_file": ("Edit", "MultiEdit"),
    "write_file": ("Write",),
    "read_file": ("Read",),
    "glob": ("Glob",),
    "grep": ("Grep",),
    "web_fetch": ("WebFetch",),
    "web_search": ("WebSearch",),
    "task": ("Task", "Agent"),
    "task_output": ("TaskOutput", "BashOutput"),
    "task_stop": ("TaskStop", "KillShell"),
    "skill": ("Skill",),
}
NANOHERMES_NAME = {claude: ours for ours, names in CLAUDE_NAMES.items() for claude in names}
# Claude Code tools with no counterpart here: a matcher naming only these never runs its hook.
CLAUDE_ONLY = frozenset(
    {
        "NotebookEdit",
        "NotebookRead",
        "PowerShell",
        "AskUserQuestion",
        "ExitPlanMode",
        "EnterPlanMode",
        "TodoWrite",
        "LS",
        "LSP",
        "Monitor",
        "SlashCommand",
        "ToolSearch",
        "ListMcpResourcesTool",
        "ReadMcpResourceTool",
        "TaskCreate",
        "TaskGet",
        "TaskList",
        "TaskUpdate",
        "CronCreate",
        "CronDelete",
        "CronList",
        "EnterWorktree",
        "ExitWorktree",
    }
)
MCP_PREFIX, CLAUDE_MCP_PREFIX = "mcp:", "mcp__"
EXACT_LIST = re.compile(r"[A-Za-z0-9_\- ,|]*")  # Claude Code: such a matcher lists exact names
MATCH_ALL = (None, "", "*")


def names_for(tool_name: str) -> tuple[str, ...]:
    """Every name the call goes by: NanoHermes's first, then Claude Code's (an MCP call
    `mcp:server.tool` is Claude's `mcp__server__tool`)."""
    if tool_name.startswith(MCP_PREFIX) and "." in tool_name:
        server, tool = tool_name[len(MCP_PREFIX) :].split(".", 1)
        return tool_name, f"{CLAUDE_MCP_PREFIX}{server}__{tool}"
    return (tool_name, *CLAUDE_NAMES.get(tool_name, ()))


def is_claude_name(name: str) -> bool:
    return name in NANOHERMES_NAME or name.startswith(CLAUDE_MCP_PREFIX)


def matcher_error(matcher: str, claude: bool) -> str:
    """Why `matcher` cannot be used ("" when it can): a regex Python cannot compile."""
    if claude and (matcher in MATCH_ALL or EXACT_LIST.fullmatch(matcher)):
        return ""
    try:
        re.compile(matcher)
    except re.error as exc:
        return f"{matcher!r} is not a regex: {exc}"
    return ""


def takes(matcher: str | None, name: str, claude: bool) -> bool:
    """Whether `matcher` takes `name` under its file's grammar (`claude`: a Claude Code settings file)."""
    if matcher in MATCH_ALL:
        return True
    if not claude:
        return re.fullmatch(matcher, name) is not None
    if EXACT_LIST.fullmatch(matcher):
        return name in {part.strip() for part in re.split(r"[|,]", matcher)}
    return re.search(matcher, name) is not None


def matched_name(matcher: str | None, tool_name: str, claude: bool) -> str | None:
    """The name of `tool_name` the matcher took (None: it takes none): the vocabulary of its file
    first, so a hook from Claude Code's settings that takes every tool is told `Bash`, and one from
    config.toml is told `run_command`."""
    ours, *theirs = names_for(tool_name)
    order = [*theirs, ours] if claude else [ours, *theirs]
    return next((name for name in order if takes(matcher, name, claude)), None)


def matches_no_tool(matcher: str | None, claude: bool, tool_names: list[str]) -> bool:
    """A matcher no tool of the session can satisfy (a typo such as `Bsh`, or a tool NanoHermes
    lacks). One that mentions MCP is not judged: a server's tools are known only once it answers."""
    if matcher in MATCH_ALL or "mcp" in matcher.lower():
        return False
    return not any(matched_name(matcher, name, claude) for name in tool_names)


def no_tool_words(matcher: str) -> str:
    """Why the warning: which of the names it lists are Claude Code tools NanoHermes has no counterpart for."""
    named = {part.strip() for part in re.split(r"[|,]", matcher)} & CLAUDE_ONLY
    lacking = f" (NanoHermes has no {', '.join(sorted(named))})" if named else ""
    return f"matcher {matcher!r} matches no tool of this session{lacking}, so the hook never runs"
