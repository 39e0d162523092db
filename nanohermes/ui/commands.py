"""Every slash command the REPL offers: importing this module registers the REPL's own (each module
below `@handles` its rows of slash/table.py); COMMANDS is the table's rows for the REPL, in /help's order."""

from __future__ import annotations

from nanohermes.ui import (  # noqa: F401  (each registers its rows' functions)
    init_command,
    mcp_commands,
    permission_commands,
    rewind_commands,
    sandbox_view,
    session_commands,
    show_commands,
    switch_commands,
)
from nanohermes.ui.command_table import COMMANDS, HANDLERS, run_slash_command

__all__ = ["COMMANDS", "HANDLERS", "run_slash_command"]
