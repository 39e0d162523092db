"""Custom commands in the REPL: the command files (prompt/commands.py) in the completion menu and in
/help with their descriptions, and `/NAME ARGUMENTS` sent as the file's prompt (nanohermes/custom_commands.py
fills it and runs its `!` commands under the session's approvals). A built-in's name is never taken by a
file; a file made after start-up is found the first time its name is typed.
"""

from __future__ import annotations

from nanohermes.custom_commands import Invocation, find_invocation, prompt_for, split_command_line
from nanohermes.prompt.commands import CustomCommand, discover_commands
from nanohermes.slash.table import COMMANDS, Command


class CustomCommands:
    """The session's command files, found at start-up and again when an unknown /name is typed."""

    def __init__(self, home, workspace):
        self.home, self.workspace = home, workspace
        self.commands, self.warnings = discover_commands(home, workspace, COMMANDS)

    def menu(self) -> dict[str, str]:
        """ "/name" -> what the completion menu says beside it (the argument hint, then the description)."""
        return {
            f"/{c.name}": " — ".join(filter(None, (c.argument_hint, c.description))) for c in self.commands.values()
        }

    def help_rows(self) -> list[Command]:
        """/help's rows: usage and description, as a built-in's."""
        return [Command(f"/{c.name}", c.usage, c.description) for c in self.commands.values()]

    def invocation(self, line: str) -> Invocation | None:
        """`line` as a custom command's invocation; None for a built-in or a name no file has."""
        name = split_command_line(line)[0]
        if name in COMMANDS:
            return None
        if name[1:] not in self.commands:
            self.commands, _ = discover_commands(self.home, self.workspace, COMMANDS)
        return find_invocation(line, self.commands)


def run_custom(repl, invocation: Invocation) -> None:
    """Fill the file's prompt (its `!` commands run with the keyboard watched: Esc stops one), then send it."""
    command: CustomCommand = invocation.command
    repl.say(f"· /{command.name}: the prompt of {command.shown_path(repl.runtime.config.workspace)}", "dim")
    repl.keys_on()
    try:
        prompt = prompt_for(invocation, repl.runtime.agent, lambda note: repl.say(f"· {note}", "dim"))
    finally:
        repl.keys_off(take=True)
        repl.renderer.area.stop()
    repl.turn(prompt.text, prompt.mentions)
