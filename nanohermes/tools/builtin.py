"""The tools, in the one order the model sees them. Read-only ones need no approval."""

from __future__ import annotations

from nanohermes.tools import Shelf, Tool
from nanohermes.tools.edit import edit_file
from nanohermes.tools.files import read_file, write_file
from nanohermes.tools.search import glob, grep
from nanohermes.tools.shell import run_command
from nanohermes.tools.web import web_fetch

BUILTIN_TOOLS: list[Tool] = [read_file, grep, glob, run_command, web_fetch, write_file, edit_file]


def all_tools(skills: Shelf, configured: list[Tool] = ()) -> list[Tool]:
    """The built-in tools, then those config.toml adds (web_search, mcp), then `task` last: a
    helper's list (all but `task`) is then a prefix of it, for prompt caches."""
    from nanohermes.tools.background_tools import TASK_TOOLS
    from nanohermes.tools.delegate import task
    from nanohermes.tools.knowledge import remember, skill
    from nanohermes.tools.recall import recall

    tools = [*BUILTIN_TOOLS, *TASK_TOOLS, remember, recall]
    if len(skills):  # an unused tool schema is paid for on every request
        tools.append(skill)
    return [*tools, *configured, task]
