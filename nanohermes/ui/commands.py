"""Every slash command: importing this module registers them all in ui/command_table.py, in
/help's order."""

from __future__ import annotations

from nanohermes.ui import (
    background_commands,
    cost_commands,
    edit_commands,
    init_command,
    mcp_commands,
    memory_commands,
    permission_commands,
    rewind_commands,
    sandbox_view,
    session_commands,
    show_commands,
    switch_commands,
)
from nanohermes.ui.command_table import COMMANDS, Command, order_by_module, run_slash_command

__all__ = ["COMMANDS", "Command", "run_slash_command"]

HELP_ORDER = (
    session_commands,  # /help, /exit, /quit, /clear, /reset, /session, /compact, /context
    cost_commands,  # /cost
    show_commands,  # /show
    memory_commands,  # /memory
    edit_commands,  # /diff, /undo
    rewind_commands,  # /rewind, /fork
    permission_commands,  # /permissions
    sandbox_view,  # /sandbox
    switch_commands,  # /model, /mode, /resume
    background_commands,  # /tasks
    mcp_commands,  # /mcp, /mcp:SERVER:PROMPT
    init_command,  # /init
)
order_by_module(HELP_ORDER)
