"""read_file and write_file: numbered, capped reads and atomic writes that show a diff (edit_file: tools/edit.py).

Every result starts with the tool and the file (`read_file src/x.py lines 1–2000 of 5120`),
so a summary of the conversation can still tell which file was touched.
"""

from __future__ import annotations

import codecs
import difflib
import io
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from nanohermes.calls import ResultFacts
from nanohermes.errors import ToolError
from nanohermes.fileio import open_regular, read_regular
from nanohermes.text import valid_unicode
from nanohermes.tools import ToolContext, ToolOutput, tool
from nanohermes.tools.diagnosed import diagnostics_note
from nanohermes.tools.fences import unfenced
from nanohermes.tools.paths import display_path, list_directory, resolve_path
from nanohermes.tools.syntax import syntax_note
from nanohermes.workspace import BINARY_SNIFF_BYTES

MAX_FILE_BYTES = 4_194_304  # a whole read of more could never fit one 20 KB result: refuse, ask for chunks
DEFAULT_LINES = 2_000  # a page of a long file; the output budget usually stops a page earlier
MIN_LINES = 20  # a smaller limit reads this many: a small model paging with limit=1 spent a request per line
MAX_LINE_CHARS = 2_000  # one minified line must not eat the whole result
LINE_READ_BYTES = MAX_LINE_CHARS * 4  # worst-case UTF-8 width: a cut line still has its 2,000 chars
NOTES_RESERVE = 200  # bytes of max_output kept for the header and the "more lines" note, besides the path
RESULT_DIFF_LINES = 60  # diff echoed to the model after a change: enough to verify it, cheap
# A write that keeps at most one line in KEPT_FOR_DIFF of the old file shows no diff, as a new file's
# write shows none: the diff would be the call's own content again. Qwen2.5-Coder-1.5B's writes of
# Exercism stubs (2 lines in, 10–30 out) repeated the file so: about 6,350 of the 151,352 prompt tokens
# sent over 15 held-out runs.
KEPT_FOR_DIFF = 4
PREVIEW_DIFF_LINES = 400  # the user approving a change gets to see more of it
UNCAPPED = 1 << 62  # a preview asked for whole: no line cap
PREVIEW_NEW_FILE_LINES = 40
DIFF_LINE_CHARS = 240  # same cut as grep lines

_utf8 = codecs.getincrementaldecoder("utf-8")


def cut_line(text: str, limit: int, *, was_cut: bool = False) -> str:
    """One line at most `limit` chars, with a visible mark when cut (here or while reading)."""
    if len(text) <= limit and not was_cut:
        return text
    return f"{text[:limit]} …[line cut at {limit} chars]"


# ---------------------------------------------------------------- read_file


@dataclass
class _Page:
    lines: list[str]  # already numbered
    first: int
    total: int
    replaced: bool  # invalid UTF-8 was shown as U+FFFD

    @property
    def last(self) -> int:
        return self.first + len(self.lines) - 1


@tool(
    params={
        "path": "",
        "offset": "1-based line",
        "limit": "",
    },
    read_only=True,
)
def read_file(ctx: ToolContext, path: str, offset: int | None = None, limit: int | None = None) -> ToolOutput:
    """Read a text file as numbered lines."""
    target = resolve_path(ctx, path, skill_files=True)
    shown = display_path(ctx, target)
    size = require_file(target, shown)
    if size > MAX_FILE_BYTES and offset is None and limit is None:
        raise ToolError(
            f"{shown} is {size} bytes, over the {MAX_FILE_BYTES}-byte read_file limit; "
            "read it in chunks with offset and limit (e.g. offset=1, limit=500)"
        )
    if limit is not None and limit < 1:
        raise ToolError("limit must be at least 1")
    first = max(offset or 1, 1)  # small models send offset=0 meaning "the start"
    buffer = ctx.editor.read_text(target) if ctx.editor is not None else None  # unsaved edits included
    opened = open_regular(target) if buffer is None else io.BytesIO(encode_text(buffer))
    with opened as f:  # checked again as opened: a FIFO swapped in must not block
        refuse_binary(f.read(BINARY_SNIFF_BYTES), shown, size)
        f.seek(0)
        page = _read_page(
            f,
            first,
            max(limit, MIN_LINES) if limit else DEFAULT_LINES,
            ctx.max_output - NOTES_RESERVE - len(shown.encode()),
        )
    found = f"lines {page.first}–{page.last} of {page.total}" if page.total else "empty file"
    return ToolOutput(_format_page(shown, page), ResultFacts(path=shown, found=found))


def _read_page(f: BinaryIO, first: int, count: int, budget: int) -> _Page:
    """Lines first..first+count-1 within `budget` bytes; streams, so huge files cost no memory."""
    lines: list[str] = []
    used, lineno, replaced, stopped = 0, 0, False, False
    for raw, was_cut in _raw_lines(f):
        lineno += 1
        if lineno < first:
            continue
        text, bad = _decode_line(raw, was_cut)
        entry = f"{lineno}\t{cut_line(text, MAX_LINE_CHARS, was_cut=was_cut)}"
        cost = len(entry.encode("utf-8")) + 1
        if len(lines) == count or (lines and used + cost > budget):
            stopped = True
            break
        lines.append(entry)
        used += cost
        replaced |= bad
    total = lineno + _count_lines(f) if stopped else lineno
    return _Page(lines, first, total, replaced)


def _raw_lines(f: BinaryIO) -> Iterator[tuple[bytes, bool]]:
    """(line bytes, was the line longer than LINE_READ_BYTES) — never loads a huge line."""
    while raw := f.readline(LINE_READ_BYTES):
        was_cut = len(raw) == LINE_READ_BYTES and not raw.endswith(b"\n")
        if was_cut:
            while (rest := f.readline(1 << 16)) and not rest.endswith(b"\n"):
                pass
        yield raw, was_cut


def _decode_line(raw: bytes, was_cut: bool) -> tuple[str, bool]:
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    final = not was_cut  # a cut line may end inside a character: drop it, don't show U+FFFD
    try:
        return _utf8("strict").decode(raw, final), False
    except UnicodeDecodeError:
        return _utf8("replace").decode(raw, final), True


def _count_lines(f: BinaryIO) -> int:
    count, last = 0, b"\n"
    while chunk := f.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def _format_page(shown: str, page: _Page) -> str:
    if page.total == 0:
        return f"read_file {shown}: empty file"
    if not page.lines:
        raise ToolError(f"offset {page.first} is past the end of {shown} ({page.total} lines)")
    header = f"read_file {shown} lines {page.first}–{page.last} of {page.total}"
    if page.replaced:
        header += " (invalid UTF-8 shown as U+FFFD)"
    parts = [header, *page.lines]
    if page.last < page.total:
        parts.append(
            f"… {page.total - page.last} more lines (total {page.total}); continue with offset={page.last + 1}"
        )
    return "\n".join(parts)


def require_file(target: Path, shown: str) -> int:
    """The file's size, or a ToolError for directories and special files."""
    if target.is_dir():
        entries, n = list_directory(target)
        more = ", …" if n > len(entries) else ""
        raise ToolError(
            f"{shown} is a directory ({n} entries: {', '.join(entries)}{more}); give a file path, or use glob"
        )
    info = target.stat()
    if not stat.S_ISREG(info.st_mode):  # a FIFO or device would block or never end
        raise ToolError(f"{shown} is not a regular file")
    return info.st_size


def refuse_binary(head: bytes, shown: str, size: int) -> None:
    if b"\0" in head:
        raise ToolError(
            f"{shown} is a binary file ({size} bytes, NUL byte in the first 8 KB); read_file shows text only "
            "(inspect it with run_command, e.g. `file` or `xxd | head`)"
        )


# ---------------------------------------------------------------- writing


def encode_text(text: str) -> bytes:
    """Text read with surrogateescape goes back byte-exact; stray surrogates from JSON are replaced."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def atomic_write(path: Path, data: bytes) -> None:
    """Replace path with data in one rename, keeping its mode; new files get 0666 minus umask."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the kernel applies the umask
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def capped_diff(old: str, new: str, shown: str, max_lines: int) -> tuple[str, int, int]:
    """A unified diff capped at max_lines, and the counts of added and removed lines."""
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{shown}", f"b/{shown}", n=2, lineterm=""))
    added = sum(1 for line in lines[2:] if line.startswith("+"))
    removed = sum(1 for line in lines[2:] if line.startswith("-"))
    shown_lines = [cut_line(printable(line), DIFF_LINE_CHARS) for line in lines[:max_lines]]
    if len(lines) > max_lines:
        shown_lines.append(f"… diff cut ({len(lines) - max_lines} more lines)")
    return "\n".join(shown_lines), added, removed


def printable(text: str) -> str:
    """Undecodable bytes (kept as surrogateescape) and stray surrogates from JSON, shown as U+FFFD."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def read_current(ctx: ToolContext, target: Path) -> bytes:
    """The file's bytes as the user has them: an editor's buffer (unsaved edits included) when an
    editor lends its files (ToolContext.editor), else the disk's."""
    buffer = ctx.editor.read_text(target) if ctx.editor is not None else None
    return read_regular(target) if buffer is None else encode_text(buffer)


def _existing_text(ctx: ToolContext, target: Path) -> str | None:
    """Current content for diffing, or None when the file is new, huge or binary."""
    try:
        if target.stat().st_size > MAX_FILE_BYTES:
            return None
        data = read_current(ctx, target)
    except (FileNotFoundError, IsADirectoryError):
        return None
    return None if b"\0" in data[:BINARY_SNIFF_BYTES] else data.decode("utf-8", "surrogateescape")


def _line_count(text: str) -> int:
    return len(text.splitlines())


def _lines(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def _plan_write(ctx: ToolContext, path: str) -> tuple[Path, str]:
    if path.strip().endswith("/"):  # "newdir/" would otherwise become a file named newdir
        raise ToolError(
            f"{valid_unicode(path.strip())} ends in /, so it names a directory; give the path of the file to write "
            "(its directories are created)"
        )
    target = resolve_path(ctx, path, must_exist=False)
    shown = display_path(ctx, target)
    if target.is_dir():
        raise ToolError(f"{shown} is a directory; give a file path")
    if target.exists() and not target.is_file():  # a FIFO or device: reading it for the diff would hang
        raise ToolError(f"{shown} is not a regular file")
    return target, shown


def _preview_write(ctx: ToolContext, path: str, content: str, whole: bool = False) -> str:
    """What the user approves: the diff, or a new file's first lines (the UI names the action);
    `whole`: all of it (the REPL's Ctrl-O at the question)."""
    try:
        target, shown = _plan_write(ctx, path)
    except ToolError as exc:
        return f"will fail: {exc}"
    old = _existing_text(ctx, target)
    content = _final_newline_kept(old, unfenced(shown, content)[0])
    if not target.exists():
        lines = content.splitlines()
        shown = len(lines) if whole else PREVIEW_NEW_FILE_LINES
        added = "\n".join("+" + cut_line(printable(line), DIFF_LINE_CHARS) for line in lines[:shown])
        more = len(lines) - shown
        return f"new file, {_lines(len(lines))}\n{added}" + (f"\n… {more} more lines" if more > 0 else "")
    if old is None:
        return f"overwrites a {target.stat().st_size}-byte binary or huge file"
    if old == content:
        return "no change: the file already has this content"
    return capped_diff(old, content, shown, UNCAPPED if whole else PREVIEW_DIFF_LINES)[0]


def planned_write(ctx: ToolContext, path: str, content: str) -> tuple[Path, str | None, str]:
    """(the file, its text now or None when new, binary or huge, the text it would get): the change an
    editor shows in a write_file's permission request. ToolError when the write would fail."""
    target, shown = _plan_write(ctx, path)
    old = _existing_text(ctx, target)
    return target, old, _final_newline_kept(old, unfenced(shown, content)[0])


@tool(params={"path": "", "content": ""}, approval=True, preview=_preview_write)
def write_file(ctx: ToolContext, path: str, content: str) -> ToolOutput:
    """Create or overwrite a file."""
    target, shown = _plan_write(ctx, path)
    content, fence_note = unfenced(shown, content)
    existed = target.exists()
    old = _existing_text(ctx, target)
    content = _final_newline_kept(old, content)
    data = encode_text(content)
    lines = _line_count(content)
    if not existed:
        found = f"new file, {_lines(lines)}"
        report = f"write_file {shown}: {found} ({len(data)} bytes)"
    elif old is None:
        found = f"replaced a binary or huge file with {lines} lines"
        report = f"write_file {shown}: {found} ({len(data)} bytes)"
    elif old == content:
        found = "unchanged"
        report = f"write_file {shown}: unchanged ({lines} lines, same content)"
    else:  # the report is built before writing: a failure here must not follow a write
        diff, added, removed = capped_diff(old, content, shown, RESULT_DIFF_LINES)
        found = f"{_line_count(old)} → {lines} lines (+{added} −{removed})"
        rewritten = (lines - added) * KEPT_FOR_DIFF <= lines
        report = f"write_file {shown}: {found}" + (
            ", rewritten: the file is this call's content" if rewritten else f"\n{diff}"
        )
    changed = old != content
    report += fence_note
    if changed:
        report += syntax_note(shown, old if existed else None, content)
    before = _old_bytes(ctx, target) if existed else None
    write_with_checkpoint(ctx, "write_file", target, shown, before, data, changed)
    if changed and (old is not None or not existed):  # a binary or huge file replaced: nothing to compare
        report += diagnostics_note(ctx, target, shown, old if existed else None, content)
    return ToolOutput(report, ResultFacts(path=shown, changed=changed, found=found))


def _final_newline_kept(old: str | None, content: str) -> str:
    """`content` with the final newline the file has when the model left it out: a file's content
    as a JSON string often lacks it, and a code block's never does, so the same file written both
    ways was a change each time (11 of 71 successive whole-file writes in three held-out runs
    differed in that alone) and the same failing file went unnoticed."""
    if old and old.endswith("\n") and content and not content.endswith("\n"):
        return content + ("\r\n" if old.endswith("\r\n") else "\n")
    return content


def _old_bytes(ctx: ToolContext, target: Path) -> bytes | None:
    """The old content for a checkpoint, or None when it is too big to keep."""
    return read_current(ctx, target) if target.stat().st_size <= MAX_FILE_BYTES else None


def write_with_checkpoint(
    ctx: ToolContext, tool_name: str, target: Path, shown: str, before: bytes | None, data: bytes, changed: bool
) -> None:
    """Write, keeping a checkpoint for /undo first: a change that cannot be taken back is not made."""
    staged = None
    if changed and ctx.checkpoints is not None:
        try:
            staged = ctx.checkpoints.stage(ctx.call_id, tool_name, target, shown, before, data)
        except OSError as exc:
            raise ToolError(
                f"could not keep an undo checkpoint ({exc.strerror or exc}); {shown} was not changed"
            ) from None
    if ctx.editor is None or not ctx.editor.write_text(target, data):  # an editor's write updates its buffer
        atomic_write(target, data)
    if staged is not None:
        ctx.checkpoints.commit(staged)
