"""grep (ripgrep, with a pure-Python fallback obeying the same caps) and glob.

Both honour .gitignore and never look inside .git. The `glob` argument of grep shadows the
glob tool inside grep's body only; nothing there needs the tool.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import threading
from base64 import b64decode
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

from nanohermes.calls import ResultFacts
from nanohermes.errors import ToolError
from nanohermes.fileio import NotRegularFile, kind_of, read_regular
from nanohermes.tools import ToolContext, ToolOutput, tool
from nanohermes.tools.files import cut_line
from nanohermes.tools.paths import display_path, resolve_path, shown_path
from nanohermes.tools.steering import glob_note_for, grep_note_for
from nanohermes.workspace import (
    BINARY_SNIFF_BYTES,
    blocking_ignore_file,
    excluded_prefix,
    exclusion_args,
    find_rg,
    rg_files,
    state_dir,
    walk,
)

MAX_MATCHES = 200  # enough to locate anything; more is a listing nobody reads
MAX_LINE_CHARS = 240  # a match line is context, not content
MAX_SEARCH_FILE_BYTES = 1_048_576  # bigger files are build output, data or logs, not source
RG_MAX_FILESIZE = "1M"  # the same 1,048,576 bytes in rg's syntax (rg searches files of exactly 1M)
MAX_GLOB_FILES = 500  # a listing past this is noise; narrow the pattern instead
MAX_STDERR_LINES = 12
# Each engine's limit: the pure-Python search stops a pattern that backtracks without end; rg
# stops when it blocks on an ignore file that is a FIFO (it opens every .gitignore it finds),
# and the search is made again without it.
SEARCH_TIMEOUT_S = 30.0


@dataclass
class _Found:
    matches: list[tuple[str, int, str]] = field(default_factory=list)  # (path relative to base, line, text)
    stopped: bool = False  # more matches existed past MAX_MATCHES
    note: str = ""  # how the search was made, when not the usual way


@dataclass(frozen=True)
class Search:
    """One grep: what to look for, where (paths are shown relative to `base`), what to leave out
    (NanoHermes's state directory) and for how long."""

    pattern: str
    target: Path
    base: Path
    glob: str | None = None
    ignore_case: bool = False
    exclude: Path | None = None
    timeout: float = SEARCH_TIMEOUT_S


class _TimedOut(Exception):
    """rg did not finish within its time."""


@tool(
    params={
        "pattern": "",
        "path": "",
        "glob": "e.g. *.py",
        "ignore_case": "",
    },
    read_only=True,
)
def grep(
    ctx: ToolContext, pattern: str, path: str = ".", glob: str | None = None, ignore_case: bool = False
) -> ToolOutput:
    """Search files for a regex (ripgrep)."""
    return run_grep(ctx, pattern, path, glob, ignore_case, find_rg())


def run_grep(
    ctx: ToolContext,
    pattern: str,
    path: str,
    glob: str | None,
    ignore_case: bool,
    rg: str | None,
    timeout: float = SEARCH_TIMEOUT_S,
) -> ToolOutput:
    """grep with a chosen engine: rg's path, or None for the pure-Python search; each is stopped
    after `timeout` seconds (rg's search is then made again without it)."""
    target = resolve_path(ctx, path)
    workspace = ctx.workspace.resolve()
    base = workspace if target.is_relative_to(workspace) else target.parent
    if not target.is_dir():  # rg reads a FIFO or /dev/zero named explicitly for ever: only files
        _check_searchable(target, display_path(ctx, target))
    search = Search(pattern, target, base, glob, ignore_case, state_dir(ctx.home), timeout)
    found = _search(search, rg)
    out = _format_grep(found, pattern, display_path(ctx, target), glob, ignore_case)
    if found.matches:
        return _steered(out, _inside_words_note(found, pattern, ignore_case, target.is_file()))
    if not ignore_case and pattern.lower() != pattern.upper():  # `relay_port` for RELAY_PORT: show what is there
        other_case = _search(replace(search, ignore_case=True), rg)
        if other_case.matches:
            return _steered(out, _other_case_note(other_case))
    return _steered(out, grep_note_for(ctx, target, glob, pattern))


def _search(search: Search, rg: str | None) -> _Found:
    blocking = blocking_ignore_file(search.target if search.target.is_dir() else search.target.parent)
    if rg and blocking is not None:
        found = search_with_python(search)
        found.note = f"(the ignore file {blocking.name} is not a regular file, so the built-in search was used)"
        return found
    try:
        if not rg:
            raise _TimedOut  # no rg at all: the built-in search
        return search_with_rg(rg, search)
    except _TimedOut:
        found = search_with_python(search)
        if rg:
            found.note = (
                f"(rg did not finish within {search.timeout:g} s — a huge tree, or an ignore file that is a FIFO — "
                "so the built-in search was used)"
            )
        return found


OTHER_CASE_LINES = 3  # enough to show the name as it is written; the model can search again for more


def _other_case_note(found: _Found) -> str:
    lines = [f"{shown_path(p)}:{n}: {cut_line(t, 120)}" for p, n, t in sorted(found.matches)[:OTHER_CASE_LINES]]
    more = len(found.matches) - len(lines)
    return "\n".join(
        ["It matches when case is ignored (ignore_case=true):", *lines] + ([f"… and {more} more"] if more > 0 else [])
    )


def _inside_words_note(found: _Found, pattern: str, ignore_case: bool, one_file: bool) -> str:
    """A word that matched only inside longer words (`port` in `import`) found nothing it was
    asked for; a small model takes those lines for the answer. Say so."""
    if not re.fullmatch(r"[A-Za-z]{3,}", pattern):
        return ""
    word = re.compile(rf"\b{pattern}\b", re.IGNORECASE if ignore_case else 0)
    if any(word.search(text) for _, _, text in found.matches):
        return ""
    where = " (in the whole workspace: path .)" if one_file else ""
    return (
        f"Every match has {pattern!r} inside a longer word; none is the word itself. "
        f"Search for \\b{pattern}\\b{where} before answering."
    )


def _steered(out: ToolOutput, note: str) -> ToolOutput:
    """An empty result and, on the next line, what does exist (tools/steering.py)."""
    return ToolOutput(f"{out}\n{note}", out.facts) if note else out


def _check_searchable(file: Path, shown: str) -> None:
    """A file named explicitly and skipped by the caps would look like "no matches", and one that
    is not a regular file would block the search: say why instead."""
    info = file.stat()
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(
            f"{shown} is {kind_of(info.st_mode)}, not a regular file; grep searches files and directories only"
        )
    if info.st_size > MAX_SEARCH_FILE_BYTES:
        raise ToolError(
            f"{shown} is {info.st_size} bytes; grep skips files over {MAX_SEARCH_FILE_BYTES} bytes "
            "(read it with read_file offset/limit, or use run_command)"
        )
    try:
        head = read_regular(file, BINARY_SNIFF_BYTES)
    except NotRegularFile as exc:  # swapped for something else since the stat
        raise ToolError(
            f"{shown} is {exc.kind}, not a regular file; grep searches files and directories only"
        ) from None
    if b"\0" in head:
        raise ToolError(f"{shown} is a binary file; grep searches text files only")


def search_with_rg(rg: str, search: Search) -> _Found:
    """Stream `rg --json`, keep MAX_MATCHES, and kill rg as soon as one more shows up (or at
    `timeout`: _TimedOut)."""
    pattern, base = search.pattern, search.base
    args = [rg, "--json", "--no-config", "--no-messages", "--hidden", "--no-require-git"]
    args += ["--max-filesize", RG_MAX_FILESIZE]
    args += ["-g", search.glob] if search.glob else []
    args += [
        "-g",
        "!.git",
        "-i" if search.ignore_case else "-s",
        "-e",
        pattern,
        "--",
        os.path.relpath(search.target, base),
    ]
    hidden = excluded_prefix(search.exclude, base)
    args[-4:-4] = exclusion_args(search.exclude, base)  # anchored: only that directory
    found = _Found()
    with subprocess.Popen(
        args, cwd=base, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        fired: list[bool] = []
        deadline = threading.Timer(search.timeout, lambda: (fired.append(True), _end(proc, reap=False)))
        deadline.start()
        try:
            _read_rg_matches(proc, found, hidden)
            stderr = proc.stderr.read().decode("utf-8", "replace")
        finally:
            deadline.cancel()
            _end(proc)  # Ctrl-C, SIGTERM or the match cap: rg never outlives the call
    if fired and not found.stopped:
        raise _TimedOut
    if proc.returncode == 2 and not found.matches:
        raise ToolError(_rg_error(pattern, stderr))
    return found


def _read_rg_matches(proc: subprocess.Popen, found: _Found, hidden: str | None) -> None:
    for line in proc.stdout:
        if not line.startswith(b'{"type":"match"'):  # begin/end/summary records: skip without parsing
            continue
        data = json.loads(line)["data"]
        path = _rg_path(data["path"]).removeprefix("./")
        if hidden and (path == hidden or path.startswith(hidden + "/")):
            continue  # the state directory, should rg's glob ever let it through
        if len(found.matches) == MAX_MATCHES:
            found.stopped = True
            proc.kill()
            return
        found.matches.append((path, data["line_number"], _rg_text(data["lines"]).rstrip("\r\n")))


def _rg_path(field_: dict) -> str:
    """A path as the file system names it: rg sends a name that is not UTF-8 as base64 bytes."""
    return field_["text"] if "text" in field_ else os.fsdecode(b64decode(field_["bytes"]))


def _rg_text(field_: dict) -> str:
    """rg gives {"text": …}, or {"bytes": base64} when the data is not valid UTF-8."""
    if "text" in field_:
        return field_["text"]
    return b64decode(field_["bytes"]).decode("utf-8", "replace")


def _rg_error(pattern: str, stderr: str) -> str:
    lines = [line.removeprefix("rg: ") for line in stderr.strip().splitlines()[:MAX_STDERR_LINES]]
    detail = "\n".join(lines) or "rg exited with an error"
    syntax = "(ripgrep regex syntax: escape ( [ { . * + ? with \\ to match them literally)"
    return f"grep could not search for {pattern!r}:\n{detail}\n{syntax}"


def search_with_python(search: Search) -> _Found:
    """The same search without rg (gitignore-aware walk, same size, binary and match caps), in a
    child process ended after `timeout` seconds: a pattern that backtracks cannot hold the session."""
    pattern, timeout = search.pattern, search.timeout
    try:
        re.compile(pattern, re.IGNORECASE if search.ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"grep could not search for {pattern!r}: invalid regex: {exc}") from None
    request = {
        "pattern": pattern,
        "target": str(search.target),
        "base": str(search.base),
        "glob": search.glob,
        "ignore_case": search.ignore_case,
        "exclude": str(search.exclude) if search.exclude else None,
        "max_matches": MAX_MATCHES,
        "max_file_bytes": MAX_SEARCH_FILE_BYTES,
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "nanohermes.tools.pysearch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = child.communicate(json.dumps(request).encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ToolError(
            f"grep stopped after {timeout:g} s: the pattern {pattern!r} makes Python's regex engine backtrack "
            "without end (nested quantifiers such as (a+)+ on long lines). Simplify it, or install ripgrep "
            "(rg), whose engine never backtracks."
        ) from None
    finally:
        _end(child)
    if child.returncode != 0:
        raise ToolError(f"grep failed: {err.decode('utf-8', 'replace').strip().splitlines()[-1:] or ['no output']}")
    result = json.loads(out)
    return _Found([(rel, line, text) for rel, line, text in result["matches"]], result["stopped"])


def _end(child: subprocess.Popen, reap: bool = True) -> None:
    """A search child never outlives its call (a timeout, Ctrl-C, SIGTERM)."""
    try:
        if child.poll() is None:
            child.kill()
    except OSError:  # it ended meanwhile
        pass
    if reap:
        child.wait()


def _format_grep(found: _Found, pattern: str, shown: str, glob: str | None, ignore_case: bool) -> ToolOutput:
    options = (f", glob {glob!r}" if glob else "") + (", ignore case" if ignore_case else "")
    head = f"grep {pattern!r} in {shown}{options}" + (f" {found.note}" if found.note else "")
    if not found.matches:
        return ToolOutput(f"{head}: no matches", ResultFacts(found="no matches"))
    matches = sorted(found.matches)  # rg runs threads: sort so output is stable
    files = len({path for path, _, _ in matches})
    lines = [f"{shown_path(path)}:{number}: {cut_line(text, MAX_LINE_CHARS)}" for path, number, text in matches]
    what = f"{_count(len(matches), 'match')} in {_count(files, 'file')}"
    if found.stopped:
        what = f"first {what}"
        lines.append(f"… stopped after {MAX_MATCHES} matches")
    return ToolOutput("\n".join([f"{head}: {what}", *lines]), ResultFacts(found=what))


# ---------------------------------------------------------------- glob


@tool(params={"pattern": "e.g. **/*.py", "path": ""}, read_only=True)
def glob(ctx: ToolContext, pattern: str, path: str | None = None) -> ToolOutput:
    """List files matching a glob, newest first."""
    root = resolve_path(ctx, path or ".")
    shown = display_path(ctx, root)
    if not root.is_dir():
        raise ToolError(f"{shown} is not a directory; path is the directory to search from")
    workspace = ctx.workspace.resolve()
    inside = root.is_relative_to(workspace)
    # The patterns' compiled regexes directly: PathSpec.match_file normalises every path
    # again and costs as much as the listing. All patterns here are inclusions.
    regexes = [p.regex for p in _glob_spec(_anchored(pattern), pattern).patterns if p.include and p.regex is not None]
    rg = find_rg()  # rg lists every file, not the pattern's: a -g glob that matches overrides .gitignore there
    listed = rg_files(rg, root, state_dir(ctx.home), timeout=SEARCH_TIMEOUT_S) if rg else None
    if listed is None:  # no rg, or rg failed: the Python walk lists the same files, slower
        listed = [
            e.path[len(os.path.join(root, "")) :]
            for _, e in walk(root, workspace if inside else root, exclude=state_dir(ctx.home))
        ]
    # Names are built by string concatenation: relpath per file would cost more than the listing.
    prefix = "" if not inside or root == workspace else root.relative_to(workspace).as_posix() + "/"
    base = os.path.join(root, "")
    hits = []
    for rel in listed:
        if not any(r.search(rel) for r in regexes):
            continue
        try:
            mtime = os.stat(base + rel, follow_symlinks=False).st_mtime
        except OSError:  # vanished meanwhile
            continue
        hits.append((mtime, prefix + rel if inside else base + rel))
    hits.sort(key=lambda hit: (-hit[0], hit[1]))
    out = _format_glob(pattern, shown, [shown_path(name) for _, name in hits])
    return out if hits else _steered(out, glob_note_for(ctx, root, pattern))


def _anchored(pattern: str) -> list[str]:
    """Shell-glob semantics as gitignore globs: anchored at the base, ** spans directories,
    {a,b} expanded."""
    return ["/" + p.removeprefix("./").lstrip("/") for p in _expand_braces(pattern.strip())]


def _glob_spec(patterns: list[str], pattern: str) -> pathspec.PathSpec:
    import pathspec

    try:
        return pathspec.PathSpec.from_lines("gitignore", patterns)
    except (ValueError, TypeError) as exc:
        raise ToolError(f"invalid glob pattern {pattern!r}: {exc}") from None


def _expand_braces(pattern: str) -> list[str]:
    """`*.{py,md}` → `*.py`, `*.md` (models use it; gitwildmatch has no braces)."""
    start = pattern.find("{")
    end = pattern.find("}", start)
    if start == -1 or end == -1:
        return [pattern]
    head, options, tail = pattern[:start], pattern[start + 1 : end].split(","), pattern[end + 1 :]
    return [expanded for option in options for expanded in _expand_braces(head + option + tail)]


def _format_glob(pattern: str, shown: str, names: list[str]) -> ToolOutput:
    head = f"glob {pattern!r} in {shown}"
    if not names:
        hint = (
            ""
            if "/" in pattern
            else f" (patterns start at the base directory: use **/{pattern} to search subdirectories)"
        )
        return ToolOutput(f"{head}: no files match{hint}", ResultFacts(found="no files match"))
    lines = [f"{head}: {_count(len(names), 'file')}, newest first", *names[:MAX_GLOB_FILES]]
    if len(names) > MAX_GLOB_FILES:
        lines.append(f"… capped at {MAX_GLOB_FILES} files")
    return ToolOutput("\n".join(lines), ResultFacts(found=_count(len(names), "file")))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}es" if noun.endswith("ch") else f"{n} {noun}s"
