"""Where edit_file's old_text lands when it is nowhere in the file as written: whitespace forgiven.

Small models copy code with its whitespace changed. Asked to fix `add` in a two-line calc.py,
Qwen2.5-Coder-1.5B sent `def add(a, b): return a - b` (the right code, on one line), was
refused, and retried the same edit for 45 requests. Peers accept such an edit when it matches
one place (aider's flexible search/replace, OpenCode's replacer chain, Codex's apply_patch
seek levels). The levels here each forgive more than the one before:

1. line-trimmed: the same lines, each compared with the whitespace at its ends stripped. The
   indentation may differ, but only by one shift for the whole block (the same lines at another
   indent); new_text is re-indented by that shift. This is also the "indentation-flexible"
   level: any block at another indent is line-trimmed-equal, so a separate level after this one
   could never match anything.
2. whitespace-normalised: runs of spaces, tabs and line breaks taken as one. new_text is
   applied word by word as a change from old_text, so the file keeps its own line breaks and
   indentation wherever the words stay (the one-line `add` stays two lines in the file).
3. block-anchored: three or more lines whose first and last lines match once trimmed and whose
   lines between are at least BLOCK_SIMILARITY alike.

Only the first level that matches anywhere counts, and it is applied only when it matches one
place: more places are candidates to name, never a guess. Pure functions on text.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

# The lines between the anchors must be this alike (difflib ratio of their trimmed text). At
# 0.8 a changed comment or a misremembered name in a five-line block still matches; a block
# with a line the model never saw does not: the edit would overwrite code it did not read.
# (OpenCode accepts any middle for a single candidate; aider's disabled fuzzy match used 0.8.)
BLOCK_SIMILARITY = 0.8
MIN_BLOCK_LINES = 3  # two anchors and at least one line between them
BLOCK_GROWTH = 2  # a candidate block at most twice old_text's lines (0.8 alike allows ~1.5x)

LINE_ENDS = "old_text matched ignoring spaces at line ends"
INDENTED = "old_text matched at another indentation; new_text re-indented to the file's"
WHITESPACE = "old_text matched ignoring whitespace; the file's line breaks and indentation kept"
ANCHORED = "old_text matched by its first and last lines; the lines between differed slightly"

_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Placement:
    """content[start:end] becomes `text`: new_text fitted to the file at this place."""

    start: int
    end: int
    text: str
    said: str  # the tolerance, as the result tells the model


def tolerant_placements(content: str, old_text: str, new_text: str) -> list[Placement]:
    """The places of the first level that matches old_text anywhere (none when no level does).
    One place: the edit to make. More: candidates, none of which may be applied."""
    lines = content.split("\n")
    starts = _line_starts(lines)
    old_lines = old_text.split("\n")
    eol = len(old_lines) > 1 and old_lines[-1] in ("", "\r")  # old_text ends with its line break
    if eol:
        old_lines.pop()
    newline = "\r\n" if "\r\n" in content else "\n"
    for level in (
        lambda: _line_trimmed(lines, starts, old_lines, eol, new_text),
        lambda: _whitespace_normalised(content, old_text, new_text, newline),
        lambda: _block_anchored(lines, starts, old_lines, eol, new_text),
    ):
        places = level()
        if places:
            return places
    return []


def line_of(content: str, offset: int) -> int:
    return content.count("\n", 0, offset) + 1


# ---------------------------------------------------------------- line levels


def _line_starts(lines: list[str]) -> list[int]:
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    return starts


def _span(lines: list[str], starts: list[int], first: int, last: int, eol: bool) -> tuple[int, int]:
    """Offsets of lines first..last: with the last line's break when old_text ended with one,
    else up to its end (a CR before the break stays, as the exact match would leave it)."""
    if eol and last < len(lines) - 1:
        return starts[first], starts[last + 1]
    tail = lines[last]
    return starts[first], starts[last] + len(tail) - tail.endswith("\r")


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _shift(pairs: list[tuple[str, str]]) -> tuple[str, str] | None:
    """("add", P) when every file line's indentation is P + old_text's, ("remove", P) when every
    old_text line's is P + the file's; None when the lines differ by more than one shift."""
    for kind, key in (("add", lambda o, f: (f, o)), ("remove", lambda o, f: (o, f))):
        prefixes = set()
        for old, real in pairs:
            longer, shorter = key(_indent(old), _indent(real))
            prefixes.add(longer[: len(longer) - len(shorter)] if longer.endswith(shorter) else None)
        if len(prefixes) == 1 and None not in prefixes:
            return kind, prefixes.pop()
    return None


def _reindent(new_text: str, shift: tuple[str, str]) -> str:
    kind, prefix = shift
    if not prefix:
        return new_text
    out = []
    for line in new_text.split("\n"):
        if not line.strip():
            out.append(line)
        elif kind == "add":
            out.append(prefix + line)
        else:  # a line shallower than the shift loses what indentation it has
            out.append(line[len(prefix) :] if line.startswith(prefix) else line.lstrip(" \t"))
    return "\n".join(out)


def _line_trimmed(lines, starts, old_lines, eol, new_text) -> list[Placement]:
    wanted = [line.strip() for line in old_lines]
    if not any(wanted):
        return []
    trimmed = [line.strip() for line in lines]
    n, places, i = len(wanted), [], 0
    while i <= len(lines) - n:
        if trimmed[i] == wanted[0] and trimmed[i : i + n] == wanted:
            pairs = [(o, f) for o, f in zip(old_lines, lines[i : i + n]) if o.strip()]
            shift = _shift(pairs)
            if shift is not None:  # else new_text's lines could not be placed faithfully
                start, end = _span(lines, starts, i, i + n - 1, eol)
                said = INDENTED if shift[1] else LINE_ENDS
                places.append(Placement(start, end, _reindent(new_text, shift), said))
                i += n
                continue
        i += 1
    return places


def _block_anchored(lines, starts, old_lines, eol, new_text) -> list[Placement]:
    n = len(old_lines)
    first, last = old_lines[0].strip(), old_lines[-1].strip()
    if n < MIN_BLOCK_LINES or not first or not last:
        return []
    middle = "\n".join(line.strip() for line in old_lines[1:-1])
    trimmed = [line.strip() for line in lines]
    places = []
    for i in (i for i, text in enumerate(trimmed) if text == first):
        for j in range(i + 2, min(len(lines), i + BLOCK_GROWTH * n)):
            if trimmed[j] != last:
                continue
            alike = difflib.SequenceMatcher(None, middle, "\n".join(trimmed[i + 1 : j]), autojunk=False)
            if alike.quick_ratio() < BLOCK_SIMILARITY or alike.ratio() < BLOCK_SIMILARITY:
                continue
            shift = _shift([(old_lines[0], lines[i]), (old_lines[-1], lines[j])])
            if shift is not None:
                start, end = _span(lines, starts, i, j, eol)
                places.append(Placement(start, end, _reindent(new_text, shift), ANCHORED))
    return places


# ---------------------------------------------------------------- words


def _words(text: str) -> tuple[list[str], list[str]]:
    """The words of text and the whitespace before each (seps[k] precedes words[k]; the last
    sep is what trails the last word)."""
    words, seps, at = [], [], 0
    for match in _WORD.finditer(text):
        seps.append(text[at : match.start()])
        words.append(match.group())
        at = match.end()
    seps.append(text[at:])
    return words, seps


def _whitespace_normalised(content: str, old_text: str, new_text: str, newline: str) -> list[Placement]:
    wanted, old_seps = _words(old_text)
    if len(wanted) < 2:  # one word has no whitespace to forgive: the exact match would have found it
        return []
    words = [(m.group(), m.start()) for m in _WORD.finditer(content)]
    m, places, i = len(wanted), [], 0
    inner = wanted[1:-1]
    while i <= len(words) - m:
        first, last = words[i][0], words[i + m - 1][0]
        # old_text may begin inside a word and end inside one, as an exact match may
        if (
            first.endswith(wanted[0])
            and last.startswith(wanted[-1])
            and [w for w, _ in words[i + 1 : i + m - 1]] == inner
        ):
            start = words[i][1] + len(first) - len(wanted[0])
            end = words[i + m - 1][1] + len(wanted[-1])
            matched = content[start:end]
            file_base = _indent(content[content.rfind("\n", 0, start) + 1 : start])
            frame = _frame(old_seps[:-1], _words(matched)[1][:-1], file_base, newline)
            text = _rewrite(matched, new_text, frame)
            places.append(Placement(start, end, text, WHITESPACE))
            i += m
            continue
        i += 1
    return places


@dataclass(frozen=True)
class _Frame:
    """Where a line break new_text brings puts the next line in the file. new_text is indented as
    old_text is; each line old_text starts in a word the file also starts a line in pairs the two
    indentations (`indents`: old_text's → the file's), so a new line is indented as the file
    indents that depth."""

    indents: dict[str, str]
    newline: str

    def fit(self, sep: str) -> str:
        if "\n" not in sep:
            return sep
        indent = sep.rpartition("\n")[2]
        known = [depth for depth in self.indents if indent.startswith(depth)]
        if known:
            depth = max(known, key=len)
            real = self.indents[depth] + indent[len(depth) :]
        else:  # shallower than any line of old_text: as much shallower in the file
            depth = min(self.indents, key=len)
            real = self.indents[depth][: max(0, len(self.indents[depth]) - (len(depth) - len(indent)))]
        return self.newline * sep.count("\n") + real


def _frame(old_seps: list[str], file_seps: list[str], file_base: str, newline: str) -> _Frame:
    """The indentation pairs of the lines old_text and the matched text both start in a word
    (the first word: old_text's own leading indentation and the matched line's)."""
    indents = {old_seps[0].rpartition("\n")[2]: file_base}
    for old, real in zip(old_seps[1:], file_seps[1:]):
        if "\n" in old and "\n" in real:
            indents.setdefault(old.rpartition("\n")[2], real.rpartition("\n")[2])
    return _Frame(indents, newline)


def _rewrite(matched: str, new_text: str, frame: _Frame) -> str:
    """new_text written over `matched` (the file's text, whose words are old_text's) as a change
    of words: kept words keep the file's whitespace; words new_text brings keep new_text's,
    its line breaks indented in the file's frame."""
    old, seps = _words(matched)
    new, new_seps = _words(new_text)
    out: list[str] = []
    pending = None  # the whitespace the next kept word gets after a change (None: the file's own)
    for tag, i1, i2, j1, j2 in _word_changes(old, new):
        if tag == "equal":
            for k in range(i1, i2):
                sep = "" if not out else (pending if pending is not None and k == i1 else seps[k])
                out += [sep, old[k]]
            pending = None
            continue
        for j in range(j1, j2):  # replace or insert: new_text's words
            if not out:
                sep = ""
            elif j == j1 and tag == "replace":
                sep = seps[i1]  # in the place of the file's words: the file's spacing before them
            else:
                sep = frame.fit(new_seps[j])
            out += [sep, new[j]]
        if tag == "replace":
            pending = seps[i2] if i2 < len(old) else None
        elif tag == "insert":
            pending = seps[i1] if i1 > 0 else frame.fit(new_seps[j2])
        else:  # delete: keep a line break that stood on either side of the removed words
            pending = seps[i1] if "\n" in seps[i1] or i2 >= len(old) else seps[i2]
    return "".join(out)


def _word_changes(old: list[str], new: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib opcodes from old to new, with the common head and tail taken whole first: a
    repeated word (`)`, `=`, `return`) must not pair with its twin elsewhere and move a line break."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    middle = difflib.SequenceMatcher(None, old[head : len(old) - tail], new[head : len(new) - tail], autojunk=False)
    changes = [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in middle.get_opcodes()]
    if head:
        changes.insert(0, ("equal", 0, head, 0, head))
    if tail:
        changes.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    return [c for c in changes if c[1] != c[2] or c[3] != c[4]]
