"""The slash-command table: every command module registers its commands here with `@command`.

ui/commands.py imports every command module and puts the table in /help's order; the REPL reads
the table through it."""

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
# What a line no command of the table names may still be (an MCP server's `/server:prompt`):
# fn(repl, line) -> keep going?, or None when the line is not its.
FALLBACKS: list[Callable[[object, str], bool | None]] = []


def command(name: str, usage: str, help: str):
    def register(fn):
        COMMANDS[name] = Command(name, usage, help, fn)
        return fn

    return register


def run_slash_command(repl, line: str) -> bool:
    name, _, arg = line.strip().partition(" ")
    cmd = COMMANDS.get(name)
    head, colon, rest = name.partition(":")
    if cmd is None and colon and head in COMMANDS:  # `/mcp:server:prompt args`: /mcp with `:server:prompt args`
        return COMMANDS[head].run(repl, f":{rest} {arg}".rstrip())
    if cmd is None:
        for fallback in FALLBACKS:
            if (handled := fallback(repl, line.strip())) is not None:
                return handled
        repl.say(f"unknown command {name}; /help lists them")
        return True
    return cmd.run(repl, arg.strip())


def order_by_module(modules) -> None:
    """Put the table in the order of `modules`, each module's commands in the order it registered
    them, whichever module was imported first (a test or a tool may import one on its own)."""
    rank = {module.__name__: i for i, module in enumerate(modules)}
    ordered = sorted(COMMANDS.values(), key=lambda c: rank.get(c.run.__module__, len(rank)))  # stable
    COMMANDS.clear()
    COMMANDS.update((c.name, c) for c in ordered)
