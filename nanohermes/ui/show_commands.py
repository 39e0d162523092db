"""/show: a tool call's full output on demand (Claude Code's Ctrl-O), paged when it is long.

The screen shows a command's last lines and a file's first; the whole output is the one the
session keeps for `recall` (the Agent's `full_output`). `/show` is the last call, `/show 2` the
one before it (counted back, as the calls are seen on the screen), `/show list` numbers the
recent ones. A `!command`'s output is among them.
"""

from __future__ import annotations

from nanohermes.ui.command_table import handles
from nanohermes.ui.escape import neutralize
from nanohermes.ui.toolview import INDENT, Line, Ran, call_text

LISTED = 20  # /show list: the recent calls, as far back as anyone counts
NOTHING = "no tool output to show yet in this session"


def resumed_calls(messages: list[dict]) -> list[Ran]:
    """The calls of a conversation's messages (a resumed session's), oldest first."""
    found = []
    for message in messages:
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            found.append(Ran(call_text(str(function.get("name")), str(function.get("arguments") or "")), call["id"]))
    return found


def output_lines(ran: Ran, text: str | None, number: int) -> list[Line]:
    """The call named, then its whole output as the model was given it (before any cut)."""
    head: Line = [(f"── {number}: ", "dim"), (neutralize(ran.title), "bold"), (" · full output", "dim")]
    if text is None:
        return [head, [(INDENT + "(its output was not kept)", "dim")]]
    body = text.expandtabs().splitlines() or ["(empty)"]
    return [head, *([(INDENT + neutralize(line), "")] for line in body)]


def list_lines(calls: list[Ran]) -> list[Line]:
    recent = list(enumerate(reversed(calls), 1))[:LISTED]
    lines = [[(f"{n:>4}  ", "dim"), (neutralize(ran.title), "")] for n, ran in reversed(recent)]
    return [*lines, [("/show N pages the Nth back (1: the last); Ctrl-O the last", "dim")]]


@handles("/show")
def _show(repl, arg: str) -> bool:
    from nanohermes.ui.pager import page

    calls = repl.renderer.ran
    if not calls:
        repl.say(NOTHING, "dim")
        return True
    if arg in ("list", "ls"):
        repl.show(list_lines(calls))
        return True
    number = int(arg) if arg.isdigit() else 1 if not arg else 0
    if not 1 <= number <= len(calls):
        repl.say(f"/show N: N from 1 (the last call) to {len(calls)}; /show list numbers them", "dim")
        return True
    ran = calls[-number]
    text = ran.text if not ran.call_id else repl.runtime.agent.full_output(ran.call_id)
    page(repl.console, repl.show, output_lines(ran, text, number))
    return True
