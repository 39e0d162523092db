"""Long text on demand (/show, Ctrl-O, an approval's whole diff): what fits the screen is printed,
what does not goes to a pager, as git does: $NANOHERMES_PAGER, else $PAGER, else `less` (with
LESS=R unless set, so colours show). On its alternate screen it leaves the scrollback as it was;
`q` returns to the prompt. No terminal, or no pager to be found: the text is printed.
"""

from __future__ import annotations

import io
import os
import shlex
import signal
import subprocess

from nanohermes.ui.toolview import Line

SCREEN_MARGIN_LINES = 2  # the prompt under the text, and a line of context above it
DEFAULT_PAGER = "less"
DEFAULT_LESS = "R"  # colours through as they are; the user's own LESS wins


def pager_argv(environ: dict[str, str]) -> list[str]:
    command = environ.get("NANOHERMES_PAGER") or environ.get("PAGER") or DEFAULT_PAGER
    try:
        return shlex.split(command) or [DEFAULT_PAGER]
    except ValueError:  # an unbalanced quote in $PAGER
        return [DEFAULT_PAGER]


def render_ansi(console, lines: list[Line]) -> str:
    """`lines` as the terminal would show them (colours as escape codes when the console has them)."""
    from rich.console import Console

    from nanohermes.ui.live import to_text

    out = io.StringIO()
    target = Console(
        file=out,
        width=console.width,
        color_system=console.color_system,
        force_terminal=console.color_system is not None,
        no_color=console.no_color,
        highlight=False,
    )
    for line in lines:
        target.print(to_text(line))
    return out.getvalue()


def page(console, say_lines, lines: list[Line]) -> None:
    """Print `lines`, through the pager when they are taller than the screen."""
    rendered = render_ansi(console, lines) if console.is_terminal else ""
    if not console.is_terminal or rendered.count("\n") <= max(1, console.height - SCREEN_MARGIN_LINES):
        say_lines(lines)
        return
    environ = {**os.environ, "LESS": os.environ.get("LESS", DEFAULT_LESS)}
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the pager's (less: stop a search)
    try:
        subprocess.run(
            pager_argv(environ), input=rendered.encode("utf-8"), env=environ, check=False, preexec_fn=_default_sigint
        )
    except OSError:  # no such pager: the scrollback is the pager
        say_lines(lines)
    finally:
        signal.signal(signal.SIGINT, previous)


def _default_sigint() -> None:
    """In the pager's process: Ctrl-C as usual (an ignored signal would be inherited)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
