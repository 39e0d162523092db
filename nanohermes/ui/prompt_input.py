"""The REPL's prompt: prompt_toolkit's line editor with the keys a Claude Code or Codex user
reaches for, completion as you type (ui/completion.py), and long pastes collapsed.

A paste of more than PASTE_LINES lines (or PASTE_CHARS characters) shows as one token,
`[Pasted text #1 +300 lines]`, while it is edited and in the scrollback once sent; the full text
is what is sent (`expand`), as Claude Code does. Ctrl-C clears a line; on an empty one it tells
the REPL (`empty_interrupt`), which leaves on a second press. Ctrl-O asks for the last tool
call's full output without losing the line being typed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

PASTE_LINES = 10  # more lines than a glance takes in: collapsed in the prompt and the scrollback
PASTE_CHARS = 2_000  # a long single line (a minified file, a log line) is collapsed too
SHOW_COMMAND = "/show"  # what Ctrl-O runs
_PASTED = re.compile(r"\[Pasted text #(\d+) \+\d+ lines?\]")


def paste_token(number: int, text: str) -> str:
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    return f"[Pasted text #{number} +{lines} line{'s' if lines != 1 else ''}]"


def expand_pastes(text: str, pastes: dict[int, str]) -> str:
    """`text` with every paste token it still holds replaced by the text pasted (a token the user
    typed themselves, or one from an earlier run, stays as it is)."""
    return _PASTED.sub(lambda m: pastes.get(int(m.group(1)), m.group(0)), text)


def collapses(text: str) -> bool:
    return text.count("\n") >= PASTE_LINES or len(text) > PASTE_CHARS


def complete_now(buffer) -> None:
    """Tab: the next entry of an open menu; else complete at once — one choice is taken, several
    give their common part and the menu. (prompt_toolkit's own Tab starts no completion while the
    one begun as you type still runs, so a Tab pressed right after typing was lost.)"""
    from prompt_toolkit.completion import CompleteEvent, get_common_complete_suffix

    if buffer.complete_state:
        buffer.complete_next()
        return
    completions = list(buffer.completer.get_completions(buffer.document, CompleteEvent(completion_requested=True)))
    if len(completions) == 1:
        buffer.apply_completion(completions[0])
    elif completions:
        common = get_common_complete_suffix(buffer.document, completions)
        if common:
            buffer.insert_text(common)
        buffer.start_completion()


class PromptInput:
    """One prompt_toolkit session for the REPL's whole run (its history, its pastes)."""

    def __init__(
        self,
        history_path,
        commands: Mapping[str, str],
        arguments: dict[str, Callable[[], Iterable[str]]],
        files: Callable[[], Sequence[str]],
        cycle_mode: Callable[[], None],
    ):
        self.history_path = history_path
        self.commands, self.arguments, self.files = commands, arguments, files
        self.cycle_mode = cycle_mode
        self.pastes: dict[int, str] = {}
        self.empty_interrupt = False  # the last Ctrl-C came at an empty prompt
        self.kept = ""  # the line Ctrl-O left: the next prompt starts with it
        self.drawn: list[Callable[[], None]] = []  # called after each render (the REPL's first-prompt event)
        self._session = None

    def read(self, message, default: str = "") -> str:
        """One line, pastes expanded. KeyboardInterrupt on Ctrl-C, EOFError on Ctrl-D."""
        from prompt_toolkit.patch_stdout import patch_stdout

        session = self._prompt_session()
        kept, self.kept = self.kept, ""
        self.empty_interrupt = False
        with patch_stdout(raw=True):  # what another thread prints appears above the prompt
            return expand_pastes(session.prompt(message, default=default or kept), self.pastes)

    def abort(self, error: BaseException) -> None:
        """End the prompt waiting now (from another thread) with `error`: read() raises it."""
        session = self._session
        if session is None or not session.app.is_running or session.app.loop is None:
            return
        session.app.loop.call_soon_threadsafe(lambda: session.app.is_running and session.app.exit(exception=error))

    def _prompt_session(self):
        if self._session is None:
            from prompt_toolkit import PromptSession
            from prompt_toolkit.history import FileHistory, InMemoryHistory

            from nanohermes.ui.completion import make_completer

            try:
                self.history_path.touch(mode=0o600, exist_ok=True)
                history = FileHistory(str(self.history_path))
            except OSError:  # a read-only state directory: this run's history stays in memory
                history = InMemoryHistory()
            self._session = PromptSession(
                history=history,
                completer=make_completer(self.commands, self.arguments, self.files),
                key_bindings=self._key_bindings(),
                multiline=False,
                complete_while_typing=True,  # the slash menu and @paths show as you type, described
                reserve_space_for_menu=6,
            )
            self._session.app.after_render += lambda app: [done() for done in self.drawn]
        return self._session

    def _key_bindings(self):
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.keys import Keys

        kb = KeyBindings()

        @kb.add("escape", "enter")
        @kb.add("c-j")
        def _newline(event):
            event.current_buffer.insert_text("\n")

        @kb.add("s-tab")  # as in Claude Code: the mode changes from the next request
        def _cycle_mode(event):
            self.cycle_mode()

        @kb.add("tab")
        def _complete(event):
            complete_now(event.current_buffer)

        @kb.add("c-c")
        def _interrupt(event):
            self.empty_interrupt = not event.current_buffer.text.strip()
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

        @kb.add("c-o")  # Claude Code's key for the full output
        def _show(event):
            self.kept = event.current_buffer.text
            event.current_buffer.text = SHOW_COMMAND  # the scrollback says what ran; history is spared
            event.app.exit(result=SHOW_COMMAND)

        @kb.add(Keys.BracketedPaste)
        def _paste(event):
            data = event.data.replace("\r\n", "\n").replace("\r", "\n")
            if collapses(data):
                number = len(self.pastes) + 1
                self.pastes[number] = data
                data = paste_token(number, data)
            event.current_buffer.insert_text(data)

        return kb
