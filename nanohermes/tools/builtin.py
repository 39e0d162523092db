"""The built-in tools, in the order the model sees them. Read-only ones need no approval."""

from __future__ import annotations

from nanohermes.tools import Tool
from nanohermes.tools.edit import edit_file
from nanohermes.tools.files import read_file, write_file
from nanohermes.tools.search import glob, grep
from nanohermes.tools.shell import run_command
from nanohermes.tools.web import web_fetch

BUILTIN_TOOLS: list[Tool] = [read_file, grep, glob, run_command, web_fetch, write_file, edit_file]
