"""The files a user's request names, sent with it.

"Use the instructions in INSTRUCTIONS.md to change calc.py", "what does src/app.py do?",
"@notes.txt": a request that names a file of the workspace gets the file as read_file shows
it, so the model starts from the text, not from a guess (asked to follow INSTRUCTIONS.md,
Qwen2.5-Coder-1.5B's first call edited `print('Hello, world!')`, text it made up, and it never
opened the file). aider adds the files a message names to the chat the same way.

A name counts when it is a path inside the workspace to a regular text file — relative, or a
bare file name that exactly one file of the workspace has — written as a word of the request
(with or without a leading @). At most MAX_FILES files; each is capped as a read_file result
is, and all of them at MAX_SHARE of that, every cut noted with how to read the rest.
"""

from __future__ import annotations

import re
from dataclasses import replace

from nanohermes.errors import ToolError
from nanohermes.tools import ToolContext
from nanohermes.tools.files import read_file
from nanohermes.tools.workspace import list_workspace, state_dir

MAX_FILES = 4  # a request that names more is about them, not asking to read them all
MAX_SHARE = 2  # all files together: at most twice what one read_file result may hold
MIN_FILE_BYTES = 600  # below this, a file's share says nothing useful: it is left out
HEADER = "[NanoHermes attached the files this request names, as read_file shows them:]"
# A word that may name a file: letters, digits and . _ - / (an @ before it is Claude Code's
# habit); it must hold a dot or a slash, so plain words are never looked up.
_WORD = re.compile(r"(?<![\w./-])@?([\w.-]*[\w-](?:/[\w.-]+)*)")


def named_files(text: str, ctx: ToolContext) -> list[str]:
    """Workspace-relative paths of the files `text` names, in the order named, at most MAX_FILES.
    Notes NanoHermes put before the user's words (`[The user ran /undo: …]` lines) don't count."""
    found: list[str] = []
    listing = None
    for word in dict.fromkeys(m.group(1).rstrip(".") for m in _WORD.finditer(users_words(text))):
        if "." not in word and "/" not in word:
            continue
        path = _existing(ctx, word)
        if path is None and "/" not in word:
            listing = listing or list_workspace(ctx.workspace, exclude=state_dir(ctx))
            same = [f for f in listing.files if f.rsplit("/", 1)[-1] == word]
            path = same[0] if len(same) == 1 else None
        if path is not None and path not in found:
            found.append(path)
        if len(found) == MAX_FILES:
            break
    return found


def users_words(text: str) -> str:
    """`text` without the bracketed notes the REPL puts before the user's words."""
    lines = text.splitlines()
    while lines and (not lines[0].strip() or (lines[0].startswith("[") and lines[0].rstrip().endswith("]"))):
        lines.pop(0)
    return "\n".join(lines)


def _existing(ctx: ToolContext, word: str) -> str | None:
    """`word` as a workspace-relative path to a regular file, or None."""
    root = ctx.workspace.resolve()
    try:
        target = (root / word).resolve()
    except (OSError, ValueError):
        return None
    if root not in target.parents or not target.is_file() or state_dir(ctx) in target.parents:
        return None
    return target.relative_to(root).as_posix()


def attachment(text: str, ctx: ToolContext) -> tuple[str, dict[str, str]]:
    """The block that travels with the request: each named file as read_file shows it ("" when
    the request names none), and what was attached of each (path -> read_file's text). A file
    that cannot be read (binary, too large) is left out."""
    paths = named_files(text, ctx)
    budget = ctx.max_output * MAX_SHARE
    parts, attached = [], {}
    for i, path in enumerate(paths):
        share = min(ctx.max_output, budget // (len(paths) - i))  # what a short file leaves goes to the next
        if share < MIN_FILE_BYTES:
            break
        try:
            shown = str(read_file.func(replace(ctx, max_output=share), path=path))
        except ToolError:
            continue
        parts.append(shown)
        attached[path] = shown
        budget -= len(shown.encode("utf-8"))
    return ("\n\n".join([HEADER, *parts]) if parts else ""), attached


def already_attached(shown: str) -> str:
    """What a read_file of an attached file says when it would show the same text again."""
    first = shown.split("\n", 1)[0]
    return f"{first}: unchanged since it was attached to the user's request above, where its text is."
