"""Every slash command: importing this module registers them all in ui/command_table.py.

/help lists the commands in the order they registered, so the imports below are that order
(and are kept out of import sorting)."""

from __future__ import annotations

# isort: off
from nanohermes.ui import (  # noqa: F401  imported to register their commands
    session_commands,  # /help, /exit, /reset, /clear, /session, /compact, /context
    memory_commands,  # /memory
    edit_commands,  # /diff, /undo, /permissions
    switch_commands,  # /model, /mode, /resume
    background_commands,  # /tasks
)

# isort: on
from nanohermes.ui.command_table import COMMANDS, Command, run_slash_command

__all__ = ["COMMANDS", "Command", "run_slash_command"]
