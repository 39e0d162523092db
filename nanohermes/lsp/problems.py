"""Which of a server's diagnostics a change introduced, and the note that says them (pure).

A problem is the same problem before and after a change when its message, code and source are
the same and the line it stands on reads the same (stripped of indentation). Not its position:
an edit above it moves it down without changing it, and a range compared would report every old
problem below an inserted line as new. The line's text tells two uses of one undefined name apart
(one was there, one is new), which the message alone would not. Numbers after "line" in a message
("redefinition of unused 'x' from line 3") are taken as the same wherever they point, for the
same reason. Problems are counted, so a second copy of an old one is new. An old problem on a line
the change touched reads as new: it stands on a line the change wrote.

The note says first that the change was made: a result listing problems must not read as a failed
edit to redo (OpenCode's tracker has agents retrying edits that were made over diagnostics).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from nanohermes.text import neutralize
from nanohermes.tools.diagnosed import MADE  # every note starts with it: the change is done, whatever follows

MAX_SHOWN = 10  # problems listed: the first ones say what broke; a hundred say the same, dearer
MESSAGE_CHARS = 200  # a message's first line or two (pyright's run to paragraphs)
ERROR, WARNING = 1, 2
SEVERITY_WORDS = {ERROR: "error", WARNING: "warning"}
_LINE_NUMBER = re.compile(r"\b(lines?) \d+")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Problem:
    line: int  # 0-based, as LSP counts
    character: int
    severity: int  # LSP's: 1 error, 2 warning, 3 information, 4 hint
    message: str
    code: str
    source: str


def problems_of(diagnostics: list) -> list[Problem]:
    """The well-formed diagnostics of a publication as Problems; the rest left out."""
    found = []
    for item in diagnostics:
        try:
            start = item["range"]["start"]
            line, character, message = start["line"], start["character"], item["message"]
        except (TypeError, KeyError):
            continue
        if not (_count(line) and _count(character) and isinstance(message, str)):
            continue
        severity = item.get("severity", ERROR)  # LSP leaves an absent one to the client: an error, as editors show it
        severity = severity if _count(severity) else ERROR
        code, source = item.get("code"), item.get("source")
        found.append(Problem(line, character, severity, message, _word(code), _word(source)))
    return found


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _word(value) -> str:
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else ""


def new_problems(before: str, old: list[Problem], after: str, now: list[Problem], least: int) -> list[Problem]:
    """The problems of `now` (in `after`) at `least` severity or worse that `old` (in `before`)
    does not account for, in the order of the file."""
    before_lines, after_lines = before.splitlines(), after.splitlines()
    left = Counter(_key(p, before_lines) for p in old)
    fresh = []
    for problem in sorted(now, key=lambda p: (p.line, p.character)):
        key = _key(problem, after_lines)
        if left[key]:
            left[key] -= 1
        elif problem.severity <= least:
            fresh.append(problem)
    return fresh


def _key(problem: Problem, lines: list[str]) -> tuple[str, str, str, str]:
    text = lines[problem.line].strip() if problem.line < len(lines) else ""
    return _LINE_NUMBER.sub(r"\1 #", problem.message), problem.code, problem.source, text


def problems_note(shown: str, server: str, problems: list[Problem], warnings: bool) -> str:
    """The lines the result ends with ('' for none): what the change broke, the first MAX_SHOWN.
    `warnings`: warnings are reported too, so each line says which it is."""
    if not problems:
        return ""
    lines = [f"\n{MADE}; new problems in {shown} ({server}):"]
    for p in problems[:MAX_SHOWN]:
        kind = f"{SEVERITY_WORDS.get(p.severity, 'note')}: " if warnings else ""
        code = f" [{neutralize(_SPACES.sub(' ', p.code))[:40]}]" if p.code else ""
        lines.append(f"  {p.line + 1}:{p.character + 1} {kind}{_message(p.message)}{code}")
    if len(problems) > MAX_SHOWN:
        lines.append(f"  … and {len(problems) - MAX_SHOWN} more (the first {MAX_SHOWN} are shown)")
    return "\n".join(lines)


def _message(message: str) -> str:
    text = neutralize(_SPACES.sub(" ", message).strip())
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + "…"
