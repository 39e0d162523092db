"""How a tool call reads on screen, the same for every tool: a mark (✓, or ✗ for an error, a
refusal or a command that failed), the call with its key arguments, what it found or how it
failed, how long it took; under a command its last output lines; coloured diffs.

Pure: events and facts in, lines of (text, style) spans out, so the REPL and `-p` word a
call alike. Everything shown from a tool, a file or a command is neutralised first.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from nanohermes import events as ev
from nanohermes.calls import ResultFacts, ToolCall, describe_call
from nanohermes.ui.escape import neutralize
from nanohermes.ui.progress import elapsed

Span = tuple[str, str]  # (text, rich style; "" for none)
Line = list[Span]


@dataclass(frozen=True)
class Ran:
    """Something whose full output /show can page: a tool call (its output is the Agent's, by
    `call_id`) or the user's `!command` (its `text`)."""

    title: str
    call_id: str = ""
    text: str = ""


TOOL_LINE_CHARS = 100  # the call part of one tool line
OUTPUT_LINE_CHARS = 200  # one shown line of a command's output
OUTCOME_CHARS = 120  # an error's first line; the model reads all of it
BLOCKED_CHARS = 160  # what the sandbox blocked, on the tool line; the model reads all of it
TAIL_LINES_FAILED = 5  # a failing command's summary and error are in its last lines
TAIL_LINES_OK = 2  # a passing one needs only its verdict ("5 passed in 0.3s")
INDENT = "  "


def plain(line: Line) -> str:
    return "".join(text for text, _ in line)


def call_text(name: str, arguments: str) -> str:
    """`run_command command=pytest -q`: the call as the context engine names it, one line."""
    return neutralize(describe_call(ToolCall.of(name, arguments), TOOL_LINE_CHARS))


def command_outcome(facts: ResultFacts) -> tuple[str, bool]:
    """("exit 1", failed) — a timeout or a signal said as such."""
    if facts.timed_out:
        return "timed out, process group killed", True
    code = facts.exit_code if facts.exit_code is not None else 0
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}", True
        except ValueError:
            return f"killed by signal {-code}", True
    return f"exit {code}", code != 0


def failed(event: ev.ToolFinished) -> bool:
    """Failed, refused, or blocked by the sandbox (a command that exited 0 included)."""
    facts = event.facts
    return not event.ok or bool(facts.blocked) or (facts.exit_code is not None and command_outcome(facts)[1])


def result_line(event: ev.ToolFinished, arguments: str, declined: str | None = None, title: str = "") -> Line:
    """`declined`: the user said no to this call (their reason, possibly ""); `title`: what the call
    is called instead of the tool and its arguments (`! git status`)."""
    facts = event.facts
    bad = failed(event)
    if declined is not None:
        outcome = f"declined: {declined}" if declined else "declined"
    elif facts.interrupted:
        return interrupted_line(event.name, arguments, event.duration_s, title)
    elif facts.exit_code is not None:
        outcome = command_outcome(facts)[0]
    elif event.ok and facts.found:
        outcome = facts.found
    else:
        outcome = event.summary  # an error: its first line says what went wrong
    if len(outcome) > OUTCOME_CHARS:
        outcome = outcome[: OUTCOME_CHARS - 1] + "…"
    line = [
        ("✗" if bad else "✓", "red" if bad else "green"),
        (" " + (neutralize(title) or call_text(event.name, arguments)), ""),
        (" · " + neutralize(outcome), "red" if bad else "dim"),
    ]
    if facts.blocked:
        said = facts.blocked if len(facts.blocked) <= BLOCKED_CHARS else facts.blocked[: BLOCKED_CHARS - 1] + "…"
        line.append((" · sandbox blocked: " + neutralize(said), "yellow"))
    return [*line, (f" · {elapsed(event.duration_s)}", "dim")]


def interrupted_line(name: str, arguments: str, seconds: float, title: str = "") -> Line:
    return [
        ("✗", "red"),
        (" " + (neutralize(title) or call_text(name, arguments)), ""),
        (" · interrupted", "yellow"),
        (f" · {elapsed(seconds)}", "dim"),
    ]


def output_tail(event: ev.ToolFinished, more_note: str = "", count: int | None = None) -> list[Line]:
    """A command's last output lines, collapsed: `… 40 more lines` above them (also what a command
    Ctrl-C stopped had printed). `more_note` follows the count (how to see the rest); `count`: the
    lines shown (default: a few, more for a failure)."""
    facts = event.facts
    if facts.exit_code is None and not (facts.interrupted and facts.output_lines):
        return []
    lines = facts.tail.splitlines()[-(count or (TAIL_LINES_FAILED if failed(event) else TAIL_LINES_OK)) :]
    if not lines:
        return [[(INDENT + "(no output)", "dim")]]
    more = facts.output_lines - len(lines)
    note = f"{INDENT}… {more} more line{'s' if more != 1 else ''}{more_note}"
    shown: list[Line] = [[(note, "dim")]] if more > 0 else []
    style = "" if failed(event) else "dim"
    for line in lines:
        text = neutralize(line.expandtabs())
        text = text if len(text) <= OUTPUT_LINE_CHARS else text[: OUTPUT_LINE_CHARS - 1] + "…"
        shown.append([(INDENT + "│ ", "dim"), (text, style)])
    return shown


def diff_style(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "bold"
    if line.startswith("@@"):
        return "cyan"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    return "dim" if line.startswith("…") else ""


def coloured_diff(lines: list[str], max_lines: int, note: str = "") -> list[Line]:
    """Diff lines coloured by kind, at most max_lines, then a note saying how many were left out."""
    shown = [[(INDENT + neutralize(line), diff_style(line))] for line in lines[:max_lines]]
    if len(lines) > max_lines:
        shown.append([(f"{INDENT}… {len(lines) - max_lines} more diff lines{note}", "dim")])
    return shown
