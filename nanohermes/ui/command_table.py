"""The REPL's slash commands: the one table (slash/table.py) at the terminal. A row the table runs is
run there and its Outcome shown (ui/outcome_view.py); a row that is the REPL's own runs the function
a ui module registered for it with `@handles`; a line no row names may be a command file's (ui/
custom_commands.py) or an MCP server's prompt (FALLBACKS).

ui/commands.py imports every module that registers a command; the REPL reads the table through it."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext

from nanohermes.slash.outcome import words
from nanohermes.slash.table import COMMANDS as TABLE
from nanohermes.slash.table import REPL, Command, offered, run_command

COMMANDS: dict[str, Command] = {c.name: c for c in offered(REPL)}  # in /help's order
HANDLERS: dict[str, Callable[[object, str], bool]] = {}  # the REPL's own rows: fn(repl, argument) -> keep going?
# What a line no command of the table names may still be (an MCP server's `/server:prompt`):
# fn(repl, line) -> keep going?, or None when the line is not its.
FALLBACKS: list[Callable[[object, str], bool | None]] = []


def handles(name: str):
    """Register the REPL's function for a row of the table that the REPL offers and runs itself."""
    row = TABLE[name]
    if REPL not in row.offered or row.run is not None:
        raise ValueError(f"{name}: the table runs it, or the REPL does not offer it")

    def register(fn):
        HANDLERS[name] = fn
        return fn

    return register


def run_slash_command(repl, line: str) -> bool:
    """Do what the slash command `line` asks; False to leave."""
    name, _, arg = line.strip().partition(" ")
    cmd = COMMANDS.get(name)
    head, colon, rest = name.partition(":")
    if cmd is None and (invocation := _custom_invocation(repl, line)) is not None:
        from nanohermes.ui.custom_commands import run_custom

        run_custom(repl, invocation)
        return True
    if cmd is None and colon and head in HANDLERS:  # `/mcp:server:prompt args`: /mcp with `:server:prompt args`
        return HANDLERS[head](repl, f":{rest} {arg}".rstrip())
    if cmd is None:
        for fallback in FALLBACKS:
            if (handled := fallback(repl, line.strip())) is not None:
                return handled
        repl.say(f"unknown command {name}; /help lists them")
        return True
    if cmd.run is None:
        return HANDLERS[cmd.name](repl, arg.strip())
    show_outcome(repl, cmd, arg.strip())
    return True


def _custom_invocation(repl, line: str):
    custom = getattr(repl, "custom", None)
    return custom.invocation(line) if custom is not None else None


def show_outcome(repl, command: Command, arg: str) -> None:
    """Run a row of the table and show what it gives back. The loop's notices while it runs are held:
    the outcome words what it did (a /compact's report), and a notice it does not word follows it."""
    from nanohermes.ui.outcome_view import outcome_lines

    renderer = getattr(repl, "renderer", None)
    with renderer.holding_notices() if renderer is not None else nullcontext([]) as held:
        outcome = run_command(repl.runtime, command, arg)
    console = getattr(repl, "console", None)
    width = console.width if console is not None else 80
    colour = console is not None and console.color_system is not None and not console.no_color
    repl.show(outcome_lines(outcome, width, colour))
    shown = words(outcome)
    for notice in held:
        if notice.text not in shown:
            renderer(notice)
