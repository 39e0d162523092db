"""Tab completion in the REPL: slash command names, then their arguments (models the server
lists for /model, the modes for /mode, session names for /resume)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

ArgumentChoices = Callable[[], Iterable[str]]


def make_completer(commands: Iterable[str], arguments: dict[str, ArgumentChoices]):
    """A prompt_toolkit Completer (built here so prompt_toolkit is imported only by the REPL)."""
    from prompt_toolkit.completion import Completer, Completion

    names = sorted(commands)

    class SlashCompleter(Completer):
        def get_completions(self, document, complete_event):
            text = document.text_before_cursor
            if not text.startswith("/"):
                return
            name, space, partial = text.partition(" ")
            if not space:
                choices = names
                partial = name
            else:
                choices = arguments.get(name, lambda: [])()
            for choice in choices:
                if choice.startswith(partial) and choice != partial:
                    yield Completion(choice, start_position=-len(partial))

    return SlashCompleter()
