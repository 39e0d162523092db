"""edit_file: exact-string replacement, tolerant only where the intended place is unambiguous.

Quotes: Qwen2.5-Coder-1.5B copied `{"food": 0.05}` from read_file as `{'food': 0.05}` three
times running and never got an edit in; text pasted through a chat or a document turns straight
quotes curly. When old_text matches nowhere as written but matches one place once every quote
mark is taken as the same, that place is edited, new_text gets the file's quotes, and the result
says so. Whitespace: when neither matches, tolerant.py tries looser levels (line ends,
indentation, all whitespace, a block's first and last lines) and the edit lands only where the
first level that matches at all matches one place; more places are named, never guessed. When
nothing matches, the error names the closest lines.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from nanohermes.calls import ResultFacts
from nanohermes.errors import ToolError
from nanohermes.tools import ToolContext, ToolOutput, tool
from nanohermes.tools.diagnosed import diagnostics_note
from nanohermes.tools.files import (
    DIFF_LINE_CHARS,
    MAX_FILE_BYTES,
    PREVIEW_DIFF_LINES,
    RESULT_DIFF_LINES,
    UNCAPPED,
    capped_diff,
    cut_line,
    encode_text,
    printable,
    read_current,
    refuse_binary,
    require_file,
    write_with_checkpoint,
)
from nanohermes.tools.paths import display_path, resolve_path
from nanohermes.tools.syntax import syntax_note
from nanohermes.tools.tolerant import line_of, tolerant_placements
from nanohermes.workspace import BINARY_SNIFF_BYTES

MAX_LISTED_LINES = 20  # line numbers named when old_text is not unique
MAX_LOOSE_CANDIDATES = 5  # places a loose match names: enough to choose from, few enough to read
QUOTE_MARKS = "'\"\u2018\u2019\u201c\u201d"  # taken as one mark when old_text matches nowhere as written
SAME_QUOTE = str.maketrans({mark: '"' for mark in QUOTE_MARKS})
QUOTES_MATCHED = "old_text matched with the file's quotes"


@dataclass
class _Edit:
    target: Path
    shown: str
    before: str
    after: str
    lines: list[int]  # line numbers of the replaced occurrences
    matched: str = ""  # the tolerance old_text needed (quotes, whitespace), as the result says it


def _plan_edit(ctx: ToolContext, path: str, old_text: str, new_text: str, replace_all: bool) -> _Edit:
    target = resolve_path(ctx, path)
    shown = display_path(ctx, target)
    size = require_file(target, shown)
    if size > MAX_FILE_BYTES:
        raise ToolError(f"{shown} is {size} bytes, over the {MAX_FILE_BYTES}-byte edit_file limit")
    data = read_current(ctx, target)  # checked again as opened: a FIFO swapped in must not block
    refuse_binary(data[:BINARY_SNIFF_BYTES], shown, size)
    content = data.decode("utf-8", "surrogateescape")  # edits keep undecodable bytes as they were
    if not old_text:
        raise ToolError("old_text is empty; to create or overwrite a whole file use write_file")
    old_text, new_text = _match_line_endings(content, old_text, new_text)
    starts, matched = _occurrences(content, old_text), ""
    if not starts and (requoted := _with_file_quotes(content, old_text, new_text)):
        old_text, new_text = requoted
        starts, matched = _occurrences(content, old_text), QUOTES_MATCHED
    if not starts:
        return _loose_edit(target, shown, content, old_text, new_text, replace_all)
    if old_text == new_text:
        raise ToolError("old_text and new_text are identical; nothing to change")
    lines = _line_numbers(content, starts)
    if len(starts) > 1 and not replace_all:
        raise ToolError(
            f"old_text appears {len(starts)} times in {shown} (lines {_list_numbers(lines)}); include more "
            "surrounding lines to make it unique, or set replace_all=true"
        )
    after = content.replace(old_text, new_text, -1 if replace_all else 1)
    return _Edit(target, shown, content, after, lines, matched)


def _loose_edit(target: Path, shown: str, content: str, old_text: str, new_text: str, replace_all: bool) -> _Edit:
    """The edit at the one place old_text matches at the first tolerant level that matches at all."""
    places = tolerant_placements(content, old_text, new_text)
    if not places:  # first: "identical" would hide that the text is not there at all
        raise ToolError(_not_found(shown, content, old_text))
    if old_text == new_text:
        raise ToolError("old_text and new_text are identical; nothing to change")
    if len(places) > 1:
        lines = sorted({line_of(content, p.start) for p in places})  # blocks of one start are one place to name
        listed = ", ".join(map(str, lines[:MAX_LOOSE_CANDIDATES])) + (
            ", …" if len(lines) > MAX_LOOSE_CANDIDATES else ""
        )
        every = " (replace_all needs old_text exactly as in the file)" if replace_all else ""
        raise ToolError(
            f"old_text is not in {shown} as written, and loosely it matches {len(lines)} places "
            f"(lines {listed}), so nothing was changed{every}. Re-read the file with read_file and copy "
            "old_text exactly, with enough surrounding lines to make it unique."
        )
    (place,) = places
    after = content[: place.start] + place.text + content[place.end :]
    if after == content:
        raise ToolError(
            "new_text differs from old_text only in whitespace that the loose match ignores; nothing to "
            "change. To change spacing, copy old_text exactly from read_file"
        )
    return _Edit(target, shown, content, after, [line_of(content, place.start)], place.said)


def _match_line_endings(content: str, old_text: str, new_text: str) -> tuple[str, str]:
    """read_file shows CRLF files without the CR; accept old_text copied from there. A file whose
    line breaks are all CRLF keeps them: new_text's lines end in CRLF too, however it was written."""
    if "\r\n" not in content:
        return old_text, new_text
    crlf = content.count("\n") == content.count("\r\n")
    if "\r\n" not in old_text and "\n" in old_text and old_text not in content:
        old_text, crlf = old_text.replace("\n", "\r\n"), True
    if crlf:
        new_text = new_text.replace("\r\n", "\n").replace("\n", "\r\n")
    return old_text, new_text


def _with_file_quotes(content: str, old_text: str, new_text: str) -> tuple[str, str] | None:
    """(the file's text, new_text in the file's quotes) when old_text differs from exactly one
    text of the file in its quote marks only; None otherwise. Every mark maps 1:1 to a mark, so
    offsets in the translated texts are offsets in the real ones."""
    if not any(mark in old_text for mark in QUOTE_MARKS):
        return None
    wanted = old_text.translate(SAME_QUOTE)
    found = {content[at : at + len(old_text)] for at in _occurrences(content.translate(SAME_QUOTE), wanted)}
    if len(found) != 1:  # none, or places quoted differently from one another: don't guess
        return None
    (actual,) = found
    mapping: dict[str, str] = {}
    for i, (mark, real) in enumerate(zip(old_text, actual)):
        quote = mark in QUOTE_MARKS and not _apostrophe(old_text, i)
        if quote and mapping.setdefault(mark, real) != real:  # the model's ' stood for both ' and ": leave new_text be
            return actual, new_text
    requoted = "".join(mapping.get(c, c) if not _apostrophe(new_text, i) else c for i, c in enumerate(new_text))
    return actual, requoted


def _apostrophe(text: str, i: int) -> bool:
    """A ' or ’ between two letters ("don't") is a letter of the word, never a quote to change."""
    return text[i] in "'\u2019" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()


def _occurrences(content: str, needle: str) -> list[int]:
    """Start offsets of non-overlapping occurrences, the ones str.replace would replace."""
    starts, at = [], content.find(needle)
    while at != -1:
        starts.append(at)
        at = content.find(needle, at + len(needle))
    return starts


def _line_numbers(content: str, starts: list[int]) -> list[int]:
    numbers, line, pos = [], 1, 0
    for start in starts:
        line += content.count("\n", pos, start)
        pos = start
        numbers.append(line)
    return numbers


def _list_numbers(numbers: list[int]) -> str:
    listed = ", ".join(map(str, numbers[:MAX_LISTED_LINES]))
    return listed + (", …" if len(numbers) > MAX_LISTED_LINES else "")


def _not_found(shown: str, content: str, old_text: str) -> str:
    """Say what is nearest, so the model fixes old_text instead of guessing again."""
    lines = content.splitlines()
    message = f"old_text not found in {shown}."
    probe = max((line.strip() for line in old_text.splitlines()), key=len, default="")
    stripped = [line.strip() for line in lines]
    close = difflib.get_close_matches(probe, stripped, n=3, cutoff=0.6) if probe else []
    numbered = sorted({stripped.index(text) + 1 for text in close})
    if numbered:
        message += " Closest line(s):\n" + "\n".join(
            f"{n}\t{cut_line(printable(lines[n - 1]), DIFF_LINE_CHARS)}" for n in numbered
        )
    return message + "\nRe-read the file with read_file and copy old_text exactly."


def _preview_edit(
    ctx: ToolContext, path: str, old_text: str, new_text: str, replace_all: bool = False, whole: bool = False
) -> str:
    """The diff the user approves (`whole`: uncapped, for the REPL's Ctrl-O at the question)."""
    try:
        edit = _plan_edit(ctx, path, old_text, new_text, replace_all)
    except ToolError as exc:
        return f"will fail: {exc}"
    return capped_diff(edit.before, edit.after, edit.shown, UNCAPPED if whole else PREVIEW_DIFF_LINES)[0]


def planned_edit(
    ctx: ToolContext, path: str, old_text: str, new_text: str, replace_all: bool = False
) -> tuple[Path, str, str]:
    """(the file, its text now, its text after the edit): the change an editor shows in an
    edit_file's permission request. ToolError when the edit would fail."""
    edit = _plan_edit(ctx, path, old_text, new_text, replace_all)
    return edit.target, edit.before, edit.after


EDIT_PARAMS = {
    "path": "",
    "old_text": "",
    "new_text": "",
    "replace_all": "",
}


@tool(params=EDIT_PARAMS, approval=True, preview=_preview_edit)
def edit_file(ctx: ToolContext, path: str, old_text: str, new_text: str, replace_all: bool = False) -> ToolOutput:
    """Replace old_text (exact; unique unless replace_all) with new_text."""
    edit = _plan_edit(ctx, path, old_text, new_text, replace_all)
    data = encode_text(edit.after)
    diff, added, removed = capped_diff(edit.before, edit.after, edit.shown, RESULT_DIFF_LINES)
    write_with_checkpoint(ctx, "edit_file", edit.target, edit.shown, encode_text(edit.before), data, True)
    where = f"line {edit.lines[0]}" if len(edit.lines) == 1 else f"lines {_list_numbers(edit.lines)}"
    n = len(edit.lines)
    found = f"replaced {n} occurrence{'s' if n > 1 else ''} ({where}{'; ' + edit.matched if edit.matched else ''})"
    text = f"edit_file {edit.shown}: {found}\n{diff}{syntax_note(edit.shown, edit.before, edit.after)}"
    text += diagnostics_note(ctx, edit.target, edit.shown, edit.before, edit.after)
    return ToolOutput(text, ResultFacts(path=edit.shown, changed=True, found=f"{found}, +{added} −{removed}"))
