"""Completion in the REPL, as you type: slash commands in a menu that says what each does, then
their arguments (models the server lists for /model, the modes for /mode, session names for
/resume); `@path` over the workspace's files and directories (what .gitignore leaves in).

`path_choices` is pure: a file list and what was typed in, the candidates out.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

ArgumentChoices = Callable[[], Iterable[str]]
MAX_PATH_CHOICES = 50  # a menu longer than this is scrolled, not read: type more of the name
LISTING_FRESH_S = 2.0  # the workspace is listed again after this (a file made meanwhile shows up)
_AT_PARTIAL = re.compile(r"(?:^|(?<=\s))@([^\s@]*)$")  # `@calc/o` at the cursor


def directories_of(files: Sequence[str]) -> list[str]:
    """Every directory holding one of `files`, as `dir/` and `dir/sub/`, sorted."""
    found = set()
    for path in files:
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            found.add("/".join(parts[:i]) + "/")
    return sorted(found)


def path_choices(files: Sequence[str], partial: str, limit: int = MAX_PATH_CHOICES) -> list[str]:
    """What `@partial` may complete to: the directories and files one level below what is typed
    (`calc/o` → `calc/ops.py`; `ca` → `calc/`, `cat.txt`), directories first; when nothing starts
    that way, every file whose path holds it (`ops` → `calc/ops.py`), as Claude Code matches."""
    base = partial[: partial.rfind("/") + 1]
    level = [
        entry
        for entry in [*directories_of(files), *files]
        if entry.startswith(partial) and entry != partial and "/" not in entry[len(base) :].rstrip("/")
    ]
    if level or not partial:
        return level[:limit]
    wanted = partial.lower()
    return [path for path in files if wanted in path.lower()][:limit]


class CachedListing:
    """The workspace's files, listed at most every LISTING_FRESH_S (completion runs per key)."""

    def __init__(self, list_files: Callable[[], Sequence[str]]):
        self.list_files = list_files
        self._files: Sequence[str] = ()
        self._at = float("-inf")

    def __call__(self) -> Sequence[str]:
        if time.monotonic() - self._at > LISTING_FRESH_S:
            self._files, self._at = self.list_files(), time.monotonic()
        return self._files


def make_completer(
    commands: Mapping[str, str], arguments: dict[str, ArgumentChoices], files: Callable[[], Sequence[str]]
):
    """A prompt_toolkit Completer (built here so prompt_toolkit is imported only by the REPL).
    `commands`: name -> what it does (the menu's description; it may grow: the REPL's fills in
    once its session is built); `files`: the workspace's files."""
    from prompt_toolkit.completion import Completer, Completion

    class ReplCompleter(Completer):
        def get_completions(self, document, complete_event):
            text = document.text_before_cursor
            at = _AT_PARTIAL.search(text)
            if at is not None:
                partial = at.group(1)
                for choice in path_choices(files(), partial):
                    yield Completion(choice, start_position=-len(partial), display="@" + choice)
                return
            if not text.startswith("/"):
                return
            name, space, partial = text.partition(" ")
            if not space:
                for choice in sorted(commands):
                    if choice.startswith(name) and choice != name:
                        yield Completion(choice, start_position=-len(name), display_meta=commands[choice])
                return
            for choice in arguments.get(name, lambda: [])():
                if choice.startswith(partial) and choice != partial:
                    yield Completion(choice, start_position=-len(partial))

    return ReplCompleter()
