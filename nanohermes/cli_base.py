"""What the command line's parts share: the exit codes, the typer app, one-line errors.

cli.py (the run itself) and subcommands.py (sessions, doctor, mcp, acp) both build on it."""

from __future__ import annotations

import sys
from enum import Enum

import typer

from nanohermes.config import MODES

# Exit codes (docs/using.md, "Exit codes"): a script can tell a finished task from one that stopped.
EXIT_OK = 0  # the model answered
EXIT_FAILURE = 1  # provider, configuration or session error
EXIT_USAGE = 2  # bad command line
# Stopped before the task was done: step limit, loop guard, cut calls, an action refused because nothing could ask.
EXIT_UNFINISHED = 3
EXIT_OVER_BUDGET = 4  # stopped at the spending cap (--max-cost, max_cost): unfinished, and why is money
EXIT_INTERRUPTED = 130  # Ctrl-C
Mode = Enum("Mode", {m: m for m in MODES}, type=str)  # --mode's choices; config validates the other sources

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: no <bool> after flags, and [mcp.servers.NAME] is text, not markup
    help="NanoHermes: a terminal coding agent for any OpenAI-compatible model.",
)


def subcommand_group(name: str, help: str, short_help: str) -> typer.Typer:
    """A group of subcommands (`nanohermes sessions …`) with the main app's plain help."""
    group = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None, help=help)
    app.add_typer(group, name=name, short_help=short_help)
    return group


def load(**flags):
    from nanohermes.configure import load_config

    return load_config(**flags)


def error(message) -> None:
    """One line on stderr: its control characters shown (a server's or a file's words may hold ESC),
    its secrets redacted (a provider's error may echo the key; CI logs are published)."""
    from nanohermes.crash import redacted
    from nanohermes.text import neutralize

    print(f"nanohermes: {neutralize(redacted(str(message)))}", file=sys.stderr, flush=True)


def refuse_unpriced(config) -> None:
    """--max-cost without --allow-unpriced: a model with no known price would spend uncounted, so
    the run does not start (exit 2). The price database is imported only here (~0.3 s)."""
    from nanohermes.loop.spending import unenforceable
    from nanohermes.provider.prices import Prices

    prices = Prices(config.prices)
    for model in dict.fromkeys((config.model, config.effective_summary_model)):
        if prices.price(model) is None:
            fail(f"{unenforceable(config.max_cost, model)}; or pass --allow-unpriced to run anyway.", EXIT_USAGE)


def fail(message: str, code: int = EXIT_FAILURE):
    error(message)
    raise typer.Exit(code)
