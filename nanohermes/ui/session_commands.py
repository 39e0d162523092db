"""The REPL's own slash commands about the session: /help (the table's rows the REPL offers, the
command files', then the keys), /exit (/quit) and /clear. /reset, /session, /compact and /context
are the table's (slash/conversation.py)."""

from __future__ import annotations

from nanohermes.ui.command_table import COMMANDS, handles

KEYS = (
    "Enter sends · Alt+Enter or Ctrl-J inserts a newline · Tab completes /commands and @paths · "
    "@path attaches a file (a directory's listing) · !command runs it, its output goes with your next message · "
    "Ctrl-O pages the last tool output in full · Ctrl-C clears the line or stops the turn, twice on an empty line "
    "exits · Esc stops the turn · while a turn runs, Enter queues what you type (Up takes the last back to edit) · "
    "Shift-Tab cycles the mode · Ctrl-D, /exit or exit leaves"
)
CUSTOM_HEADER = "commands from files:"
NARROW_HELP = 60  # below this many columns a command's description goes under it, not beside it


def help_lines(commands, width: int, custom=()) -> list[str]:
    """Each command with its description wrapped on words beside it (under it when narrow), then the
    commands from files (`custom`, ui/custom_commands.py), then the keys."""
    import textwrap

    usage_width = max(len(c.usage) for c in [*commands, *custom])
    lines = _rows(commands, usage_width, width)
    if custom:
        lines += ["", CUSTOM_HEADER, *_rows(custom, usage_width, width)]
    keys = [k.strip() for k in KEYS.split(" · ")]
    return lines + [""] + [line for key in keys for line in textwrap.wrap(key, width - 1, subsequent_indent="    ")]


def _rows(commands, usage_width: int, width: int) -> list[str]:
    import textwrap

    lines = []
    for c in commands:
        if width < NARROW_HELP:
            lines.append(f"  {c.usage}")
            lines += textwrap.wrap(c.help, width - 1, initial_indent="      ", subsequent_indent="      ")
            continue
        indent = " " * (usage_width + 4)
        text = textwrap.wrap(c.help, max(20, width - 1 - len(indent))) or [""]
        lines.append(f"  {c.usage:<{usage_width}}  {text[0]}".rstrip())
        lines += [indent + more for more in text[1:]]
    return lines


@handles("/help")
def _help(repl, arg: str) -> bool:
    console = getattr(repl, "console", None)
    custom = repl.custom.help_rows() if getattr(repl, "custom", None) is not None else []
    repl.say("\n".join(help_lines(list(COMMANDS.values()), console.width if console is not None else 80, custom)))
    return True


@handles("/quit")
@handles("/exit")
def _exit(repl, arg: str) -> bool:
    return False


@handles("/clear")
def _clear(repl, arg: str) -> bool:
    old = repl.runtime.session
    name, saved = old.name, old.saved
    from nanohermes.ui.switch_commands import open_session

    open_session(repl, None)
    if saved:
        repl.say(f"· the cleared conversation is saved as session {name}: /resume {name} returns to it", "dim")
    return True
