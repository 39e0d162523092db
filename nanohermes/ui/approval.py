"""The approval question: the action named for what it is (a command to run, a file to edit),
its preview once (a diff coloured), and an answer that can be scoped (for this session, or
"always": saved for this project; either for this command prefix, exact command or path) or a
"no" that says why. A call nothing may be granted for (it names a path outside the workspace,
or an ask rule decides it) offers only yes and no.
"""

from __future__ import annotations

import re

from nanohermes.calls import action_title
from nanohermes.loop.approvals import Decision
from nanohermes.loop.grants import Grant
from nanohermes.ui.escape import neutralize
from nanohermes.ui.toolview import Line, coloured_diff

SCOPE_CHARS = 60  # the question stays one line in an 100-column terminal
PREVIEW_LINES = 400  # the tools cap their previews (with a note); this only bounds a tool that does not
ANSWERS = {
    **{"y": "yes", "yes": "yes", "a": "always", "always": "always", "n": "no", "no": "no"},
    **{"s": "session", "session": "session"},
}
NO_PREFIX = re.compile(r"^(no?)\b\s*[:,.\-–—]?\s*", re.IGNORECASE)


def preview_lines(tool_name: str, preview: str) -> list[Line]:
    """The preview body: a diff coloured by line kind; a command as it will run."""
    lines = preview.splitlines()
    if tool_name in ("edit_file", "write_file"):
        return coloured_diff(lines, PREVIEW_LINES)
    return [[("  " + neutralize(line), "bold" if line.startswith("$") else "dim")] for line in lines[:PREVIEW_LINES]]


def question(scope: Grant | None) -> str:
    """`[s]ession` and `[a]lways` (this project) both cover `scope`; without one, yes or no."""
    if scope is None:
        return "allow? [y]es · [n]o, or say what to do instead (asked every time) › "
    scope_text = neutralize(scope.describe())
    if len(scope_text) > SCOPE_CHARS:
        scope_text = scope_text[: SCOPE_CHARS - 1] + "…"
    return f"allow? [y]es · [s]ession · [a]lways: {scope_text} · [n]o, or say what to do instead › "


def parse_answer(text: str, scoped: bool = True) -> Decision | None:
    """y / s / a / n, or any other text: a no with that text as the reason (`n: use make clean`
    and `use make clean` alike). None for an empty line, or s / a when nothing may be granted
    (ask again)."""
    answer = text.strip()
    if not answer:
        return None
    known = ANSWERS.get(answer.lower())
    if known in ("always", "session") and not scoped:
        return None
    if known:
        return Decision(known)
    return Decision("no", NO_PREFIX.sub("", answer, count=1).strip() or answer)


def ask(say_lines, tool_name: str, args: dict, preview: str, scope: Grant | None) -> Decision:
    """Show the action once and read the answer. Ctrl-C or Esc stops the turn (KeyboardInterrupt),
    Ctrl-D says no."""
    from prompt_toolkit import prompt  # no history: answers are not commands
    from prompt_toolkit.key_binding import KeyBindings

    say_lines(
        [
            [("● ", "yellow"), (neutralize(action_title(tool_name, args)), "bold yellow")],
            *preview_lines(tool_name, preview),
        ]
    )
    keys = KeyBindings()

    @keys.add("escape", eager=True)
    def _stop(event):
        event.app.exit(exception=KeyboardInterrupt)

    while True:
        try:
            decision = parse_answer(prompt(question(scope), key_bindings=keys), scoped=scope is not None)
        except EOFError:
            return Decision("no")
        if decision is not None:
            return decision
