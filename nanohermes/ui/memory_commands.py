"""The /memory slash command (its words are memory/commands.py's, shared with an editor)."""

from __future__ import annotations

from nanohermes.memory.commands import memory_command
from nanohermes.ui.command_table import command


@command(
    "/memory",
    "/memory [list|add|forget|search]",
    "long-term memory: list, add TEXT, forget ID, search Q; pending, confirm ID, drop ID: what a compaction held",
)
def _memory(repl, arg: str) -> bool:
    repl.say(memory_command(repl.runtime.memory, arg))
    return True
