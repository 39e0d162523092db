"""A change written as the whole new file in a code block, run as the write_file call it means.

Qwen2.5-Coder-1.5B writes better code in a Markdown block than inside a JSON string: told to
make the change at the same point of nine Exercism exercises (the dev set, temperature 0), its
write_file calls passed 13 of their 113 tests, and asked for the file in a code block, tools
off, 45 of 113 (edit_file, on seven of them: 8 of 80; blocks 34 of 80). So when a request to
change one file (the only code file it named that is no test and no document) goes unmade, the
loop asks for that file whole, tools off, and runs the reply's block as a write_file call:
through the approvals, recorded as a real call, so the history stays valid. Going round after a
write (the tests it was shown refuse the file), it is asked again, up to four asks a turn; a
change the user's check (a PostToolUse hook) still refuses after those ends the run
(small.py). A reply that shows the whole new file unasked, introduced by its name, is
taken the same way when it keeps every function and class the file has (a snippet never
replaces a file).
"""

from __future__ import annotations

import ast
import json
import re
import secrets
from dataclasses import replace
from pathlib import Path, PurePosixPath

from nanohermes.loop.coach.spec import is_test_file
from nanohermes.provider import AssistantTurn
from nanohermes.tools.fences import PROSE_SUFFIXES

WHOLE_FILE_MAX_CHARS = 8_000  # a file the model can write again whole within a small model's reply
FENCED = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n`]*\n(.*?)^[ \t]*\1[ \t]*$", re.S | re.M)
SHOWN_WHOLE = re.compile(r"read_file (?P<path>.+) lines 1–(?P<last>\d+) of (?P=last)\n")
WRITE_IT_WHOLE = "Reply with the whole new content of {path} in one {fence}, no tool call.]"
# The block's fence named by the file's language: asked with the request for "one code block", Qwen2.5-Coder-1.5B
# (whose chat template asks for calls in a ```json block) answered 3 of 3 dev exercises with a ```json call of
# the exercise's function, or a read; asked for "one ```python block", 4 of 4 with the file.
FENCE_TAGS = {
    ".py": "python", ".js": "javascript", ".mjs": "javascript", ".jsx": "jsx", ".ts": "typescript", ".tsx": "tsx",
    ".go": "go", ".rs": "rust", ".rb": "ruby", ".java": "java", ".kt": "kotlin", ".swift": "swift", ".c": "c",
    ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp", ".php": "php", ".lua": "lua",
    ".sh": "bash", ".html": "html", ".css": "css", ".sql": "sql",
}  # fmt: skip


def change_target(attached: dict[str, str]) -> str | None:
    """The one file a request to change code is about: of the files it named (path -> as attached),
    the only one that is code, no test, and was attached whole and small enough to write again."""
    code = [path for path in attached if is_code(path)]
    if len(code) != 1:
        return None
    shown = SHOWN_WHOLE.match(attached[code[0]])
    return code[0] if shown and len(attached[code[0]]) <= WHOLE_FILE_MAX_CHARS else None


def only_file(attached: dict[str, str]) -> str | None:
    """The request named one file and it is code (no test, no document), attached whole or in part."""
    return next(iter(attached)) if len(attached) == 1 and is_code(next(iter(attached))) else None


def is_code(path: str) -> bool:
    return (
        not path.endswith("/")
        and PurePosixPath(path).suffix != ""
        and not path.lower().endswith(PROSE_SUFFIXES)
        and not is_test_file(path)
    )


def asked_for(path: str, why: str) -> str:
    """The note that asks for `path` whole: `why` is the note's opening, "[…." without its bracket."""
    tag = FENCE_TAGS.get(PurePosixPath(path).suffix.lower())
    return f"{why} {WRITE_IT_WHOLE.format(path=path, fence=f'```{tag} block' if tag else 'code block')}"


def as_write(reply: AssistantTurn, path: str, workspace: Path, asked: bool) -> AssistantTurn | None:
    """`reply` as a write_file call of `path` when its text holds the whole new file: the block
    asked for (`asked`), else one block introduced by the file's name that keeps the file's
    functions and classes. None when it does not, or it was not asked for and would not change the file
    (asked for, the same file again is the model's answer to the ask: the write says it changed nothing)."""
    if reply.tool_calls or reply.finish_reason not in (None, "stop"):
        return None  # a reply cut short never replaces a file
    try:
        current = (workspace / path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found = _asked_block(reply.content, path, current) if asked else _shown_block(reply.content, path, current)
    if found is None or (not asked and found[0].strip() == current.strip()):
        return None
    content, rest = found
    call = {
        "id": f"call_{secrets.token_hex(12)}",
        "type": "function",
        "function": {"name": "write_file", "arguments": json.dumps({"path": path, "content": content})},
    }
    return replace(reply, content=rest, tool_calls=[call], finish_reason="tool_calls")


def _asked_block(text: str, path: str, current: str) -> tuple[str, str] | None:
    """The longest block of a reply that was asked for the file whole (Python: one that parses and
    keeps one or more of the file's top-level functions and classes, if it has any: asked for
    line_up.py whole with the request, Qwen2.5-Coder-1.5B replied with a block holding only
    `{"name": "line_up", "arguments": {…}}`, which parses)."""
    blocks = sorted(FENCED.finditer(text), key=lambda m: len(m.group(2)), reverse=True)
    if not blocks:
        return None
    if path.endswith(".py"):
        new, old = _names(blocks[0].group(2)), _names(current)
        if new is None or (old and not old & new):
            return None
    return blocks[0].group(2), _without(text, blocks[0])


def _shown_block(text: str, path: str, current: str) -> tuple[str, str] | None:
    """The reply's only block, when the line before it names the file, and (Python only: elsewhere
    a snippet cannot be told from a file) it parses and keeps every top-level def and class."""
    blocks = list(FENCED.finditer(text))
    if len(blocks) != 1 or not path.endswith(".py"):
        return None
    block = blocks[0]
    introduced = text[: block.start()].rstrip().rpartition("\n")[2]
    if PurePosixPath(path).name not in introduced:
        return None
    new, old = _names(block.group(2)), _names(current)
    if new is None or old is None or not old <= new:
        return None
    return block.group(2), _without(text, block)


def _names(source: str) -> set[str] | None:
    """The top-level functions and classes of Python `source`; None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {node.name for node in tree.body if isinstance(node, kinds)}


def _without(text: str, block: re.Match) -> str:
    return (text[: block.start()].rstrip() + "\n\n" + text[block.end() :].strip()).strip()
