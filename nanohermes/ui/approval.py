"""The approval question: the action named for what it is (a command to run, a file to edit),
its preview once (a diff coloured), and an answer that can be scoped (for this session, or
"always": saved for this project; either for this command prefix, exact command or path) or a
"no" that says why. A call nothing may be granted for (it names a path outside the workspace,
or an ask rule decides it) offers only yes and no. A preview cut short (a long new file, a big
diff) says so, and Ctrl-O at the question pages the whole of it.

The question wraps on words at the terminal's width, so no word is broken at 60 columns.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable

from nanohermes.calls import WRITING_TOOLS, action_title
from nanohermes.loop.approvals import Decision
from nanohermes.permissions.grants import Grant
from nanohermes.ui.escape import neutralize
from nanohermes.ui.toolview import Line, coloured_diff

# What "always" covers is shown whole up to this (the question wraps); a longer one (an exact
# command of several lines) is in the preview above it, and here ends on a word.
SCOPE_CHARS = 200
PREVIEW_LINES = 400  # the tools cap their previews (with a note); this only bounds a tool that does not
ANSWERS = {
    **{"y": "yes", "yes": "yes", "a": "always", "always": "always", "n": "no", "no": "no"},
    **{"s": "session", "session": "session"},
}
NO_PREFIX = re.compile(r"^(no?)\b\s*[:,.\-–—]?\s*", re.IGNORECASE)
SHOW_WHOLE = "\x0f"  # what Ctrl-O at the question answers: page the whole preview, then ask again


def preview_lines(tool_name: str, preview: str, everything: bool = False) -> list[Line]:
    """The preview body: a diff coloured by line kind; a command as it will run."""
    lines = preview.splitlines()
    if tool_name in ("edit_file", "write_file"):
        return coloured_diff(lines, len(lines) if everything else PREVIEW_LINES)
    return [[("  " + neutralize(line), "bold" if line.startswith("$") else "dim")] for line in lines[:PREVIEW_LINES]]


def whole_preview(tool, args: dict, ctx) -> str | None:
    """A write's or an edit's whole diff (None for other tools, whose preview is whole already)."""
    if tool.name not in WRITING_TOOLS or tool.preview is None:
        return None
    try:
        return tool.preview(ctx, **args, whole=True)
    except Exception:  # a broken preview must never stop the question (the capped one is shown)
        return None


def wrapped(text: str, width: int) -> str:
    """`text` broken on words into lines of at most `width` - 1 columns (the last keeps its
    trailing space: the answer is typed after it)."""
    lines = textwrap.wrap(text, max(20, width - 1), break_long_words=True, break_on_hyphens=False)
    return "\n".join(lines) + (" " if text.endswith(" ") else "")


def question(scope: Grant | None) -> str:
    """`[s]ession` and `[a]lways` (this project) both cover `scope`; without one, yes or no."""
    if scope is None:
        return "allow? [y]es · [n]o, or say what to do instead (asked every time) › "
    scope_text = neutralize(scope.describe())
    if len(scope_text) > SCOPE_CHARS:  # on a word: what "always" covers is never cut mid-word
        head = scope_text[: SCOPE_CHARS - 1]
        space = head.rfind(" ")
        scope_text = (head[:space] if space > SCOPE_CHARS // 2 else head) + " …"
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


def ask(
    say_lines,
    tool_name: str,
    args: dict,
    preview: str,
    scope: Grant | None,
    whole: str | None = None,
    page: Callable[[list[Line]], None] | None = None,
) -> Decision:
    """Show the action once and read the answer. Ctrl-C or Esc stops the turn (KeyboardInterrupt),
    Ctrl-D says no; Ctrl-O pages `whole` (the uncut preview) through `page`, then asks again."""
    import shutil

    from prompt_toolkit import prompt  # no history: answers are not commands
    from prompt_toolkit.key_binding import KeyBindings

    cut = whole is not None and page is not None and whole != preview
    hint = [[(f"  Ctrl-O shows the whole of it ({len(whole.splitlines())} lines)", "dim")]] if cut else []
    title = [("● ", "yellow"), (neutralize(action_title(tool_name, args)), "bold yellow")]
    say_lines([title, *preview_lines(tool_name, preview), *hint])
    keys = KeyBindings()

    @keys.add("escape", eager=True)
    def _stop(event):
        event.app.exit(exception=KeyboardInterrupt)

    @keys.add("c-o")
    def _whole(event):
        event.app.exit(result=SHOW_WHOLE)

    while True:
        text = wrapped(question(scope), shutil.get_terminal_size().columns)
        try:
            answer = prompt(text, key_bindings=keys)
        except EOFError:
            return Decision("no")
        if answer == SHOW_WHOLE:
            if cut:
                page([title, *preview_lines(tool_name, whole, everything=True)])
            continue
        decision = parse_answer(answer, scoped=scope is not None)
        if decision is not None:
            return decision
