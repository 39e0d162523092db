"""The slash-command table: every command module registers its commands here with `@command`.

Registration order is /help's order; ui/commands.py imports every command module, in that
order, and is what the REPL reads the table through."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    name: str
    usage: str
    help: str
    run: Callable[[object, str], bool]  # (repl, argument) -> keep going?


COMMANDS: dict[str, Command] = {}


def command(name: str, usage: str, help: str):
    def register(fn):
        COMMANDS[name] = Command(name, usage, help, fn)
        return fn

    return register


def run_slash_command(repl, line: str) -> bool:
    name, _, arg = line.strip().partition(" ")
    cmd = COMMANDS.get(name)
    if cmd is None:
        repl.say(f"unknown command {name}; /help lists them")
        return True
    return cmd.run(repl, arg.strip())
