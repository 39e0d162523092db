"""grep (ripgrep, with a pure-Python fallback obeying the same caps) and glob.

Both honour .gitignore and never look inside .git. The `glob` argument of grep shadows the
glob tool inside grep's body only; nothing there needs the tool.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from base64 import b64decode
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING


if TYPE_CHECKING:
    import pathspec

from nanohermes.calls import ResultFacts
from nanohermes.errors import ToolError
from nanohermes.tools import ToolContext, ToolOutput, tool
from nanohermes.tools.files import BINARY_SNIFF_BYTES, cut_line
from nanohermes.tools.paths import display_path, resolve_path, state_dir, walk

MAX_MATCHES = 200  # enough to locate anything; more is a listing nobody reads
MAX_LINE_CHARS = 240  # a match line is context, not content
MAX_SEARCH_FILE_BYTES = 1_048_576  # bigger files are build output, data or logs, not source
RG_MAX_FILESIZE = "1M"  # the same 1,048,576 bytes in rg's syntax (rg searches files of exactly 1M)
MAX_GLOB_FILES = 500  # a listing past this is noise; narrow the pattern instead
MAX_STDERR_LINES = 12


@dataclass
class _Found:
    matches: list[tuple[str, int, str]] = field(default_factory=list)  # (path relative to base, line, text)
    stopped: bool = False  # more matches existed past MAX_MATCHES


@functools.cache
def find_rg() -> str | None:
    """The pinned rg the `ripgrep` wheel put beside our python (its bin may not be on PATH), else any rg."""
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


@tool(
    params={
        "pattern": "regex (ripgrep syntax)",
        "path": "file or directory (default .)",
        "glob": "file filter, e.g. *.py",
        "ignore_case": "case-insensitive",
    }
)
def grep(ctx: ToolContext, pattern: str, path: str = ".", glob: str | None = None, ignore_case: bool = False) -> ToolOutput:
    """Search file contents for a regex; prints path:line: text, at most 200 matches."""
    return run_grep(ctx, pattern, path, glob, ignore_case, find_rg())


def run_grep(ctx: ToolContext, pattern: str, path: str, glob: str | None, ignore_case: bool, rg: str | None) -> ToolOutput:
    """grep with a chosen engine: rg's path, or None for the pure-Python search."""
    target = resolve_path(ctx, path)
    workspace = ctx.workspace.resolve()
    base = workspace if target.is_relative_to(workspace) else target.parent
    if target.is_file():
        _check_searchable(target, display_path(ctx, target))
    home = state_dir(ctx)
    if rg:
        found = search_with_rg(rg, pattern, target, base, glob, ignore_case, home)
    else:
        found = search_with_python(pattern, target, base, glob, ignore_case, home)
    return _format_grep(found, pattern, display_path(ctx, target), glob, ignore_case)


def _check_searchable(file: Path, shown: str) -> None:
    """A file named explicitly and skipped by the caps would look like "no matches": say why instead."""
    size = file.stat().st_size
    if size > MAX_SEARCH_FILE_BYTES:
        raise ToolError(
            f"{shown} is {size} bytes; grep skips files over {MAX_SEARCH_FILE_BYTES} bytes "
            "(read it with read_file offset/limit, or use run_command)"
        )
    with open(file, "rb") as f:
        if b"\0" in f.read(BINARY_SNIFF_BYTES):
            raise ToolError(f"{shown} is a binary file; grep searches text files only")


def search_with_rg(rg: str, pattern: str, target: Path, base: Path, glob: str | None, ignore_case: bool,
                   exclude: Path | None = None) -> _Found:
    """Stream `rg --json`, keep MAX_MATCHES, and kill rg as soon as one more shows up."""
    args = [rg, "--json", "--no-config", "--no-messages", "--hidden", "--no-require-git"]
    args += ["--max-filesize", RG_MAX_FILESIZE]
    args += ["-g", glob] if glob else []
    args += ["-g", "!.git", "-i" if ignore_case else "-s", "-e", pattern, "--", os.path.relpath(target, base)]
    if exclude is not None and exclude.is_relative_to(base) and exclude != base:
        args[-4:-4] = ["-g", "!/" + exclude.relative_to(base).as_posix()]  # anchored: only that directory
    found = _Found()
    with subprocess.Popen(args, cwd=base, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        for line in proc.stdout:
            if not line.startswith(b'{"type":"match"'):  # begin/end/summary records: skip without parsing
                continue
            if len(found.matches) == MAX_MATCHES:
                found.stopped = True
                proc.kill()
                break
            data = json.loads(line)["data"]
            text = _rg_text(data["lines"]).rstrip("\r\n")
            found.matches.append((_rg_text(data["path"]).removeprefix("./"), data["line_number"], text))
        stderr = proc.stderr.read().decode("utf-8", "replace")
    if proc.returncode == 2 and not found.matches:
        raise ToolError(_rg_error(pattern, stderr))
    return found


def _rg_text(field_: dict) -> str:
    """rg gives {"text": …}, or {"bytes": base64} when the data is not valid UTF-8."""
    if "text" in field_:
        return field_["text"]
    return b64decode(field_["bytes"]).decode("utf-8", "replace")


def _rg_error(pattern: str, stderr: str) -> str:
    lines = [line.removeprefix("rg: ") for line in stderr.strip().splitlines()[:MAX_STDERR_LINES]]
    detail = "\n".join(lines) or "rg exited with an error"
    return f"grep could not search for {pattern!r}:\n{detail}\n(ripgrep regex syntax: escape ( [ {{ . * + ? with \\ to match them literally)"


def search_with_python(pattern: str, target: Path, base: Path, glob: str | None, ignore_case: bool,
                       exclude: Path | None = None) -> _Found:
    """The same search without rg: gitignore-aware walk, same size, binary and match caps."""
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"grep could not search for {pattern!r}: invalid regex: {exc}") from None
    if target.is_file():  # as rg: a file named explicitly is searched whatever the filters say
        files = [(os.path.relpath(target, base), target)]
    else:
        import pathspec

        only = pathspec.GitIgnoreSpec.from_lines([glob]) if glob else None
        # rg matches -g against the path from its cwd, which is base
        files = ((rel, Path(entry.path)) for rel, entry in walk(target, base, exclude=exclude) if only is None or only.match_file(rel))
    found = _Found()
    for rel, file in files:
        if not _search_file(regex, rel, file, found):
            break
    return found


def _search_file(regex: re.Pattern, rel: str, file: Path, found: _Found) -> bool:
    """Add the file's matches to found; False once the cap is passed."""
    try:
        if file.stat().st_size > MAX_SEARCH_FILE_BYTES:
            return True
        data = file.read_bytes()
    except OSError:
        return True
    if b"\0" in data:
        return True
    text = data.decode("utf-8", "replace")
    if not regex.search(text):  # most files do not match: one scan, no line split
        return True
    for number, line in enumerate(text.split("\n"), 1):  # "\n" only: splitlines() would shift numbers vs rg
        line = line.removesuffix("\r")
        if regex.search(line):
            if len(found.matches) == MAX_MATCHES:
                found.stopped = True
                return False
            found.matches.append((rel, number, line))
    return True


def _format_grep(found: _Found, pattern: str, shown: str, glob: str | None, ignore_case: bool) -> ToolOutput:
    options = (f", glob {glob!r}" if glob else "") + (", ignore case" if ignore_case else "")
    head = f"grep {pattern!r} in {shown}{options}"
    if not found.matches:
        return ToolOutput(f"{head}: no matches", ResultFacts(found="no matches"))
    matches = sorted(found.matches)  # rg runs threads: sort so output is stable
    files = len({path for path, _, _ in matches})
    lines = [f"{path}:{number}: {cut_line(text, MAX_LINE_CHARS)}" for path, number, text in matches]
    what = f"{_count(len(matches), 'match')} in {_count(files, 'file')}"
    if found.stopped:
        what = f"first {what}"
        lines.append(f"… stopped after {MAX_MATCHES} matches")
    return ToolOutput("\n".join([f"{head}: {what}", *lines]), ResultFacts(found=what))


# ---------------------------------------------------------------- glob


@tool(params={"pattern": "glob, e.g. **/*.py", "path": "base directory (default .)"})
def glob(ctx: ToolContext, pattern: str, path: str | None = None) -> ToolOutput:
    """List files matching a glob pattern, newest first (honours .gitignore, at most 500)."""
    root = resolve_path(ctx, path or ".")
    shown = display_path(ctx, root)
    if not root.is_dir():
        raise ToolError(f"{shown} is not a directory; path is the directory to search from")
    workspace = ctx.workspace.resolve()
    inside = root.is_relative_to(workspace)
    # The patterns' compiled regexes directly: PathSpec.match_file normalises every path
    # again and costs as much as the listing. All patterns here are inclusions.
    regexes = [p.regex for p in _glob_spec(_anchored(pattern), pattern).patterns if p.include and p.regex is not None]
    rg = find_rg()
    listed = _files_with_rg(rg, root, state_dir(ctx)) if rg else None
    if listed is None:  # no rg, or rg failed: the Python walk lists the same files, slower
        listed = [e.path[len(os.path.join(root, "")) :] for _, e in walk(root, workspace if inside else root, exclude=state_dir(ctx))]
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
    return _format_glob(pattern, shown, [name for _, name in hits])


def _anchored(pattern: str) -> list[str]:
    """Shell-glob semantics as gitignore globs: anchored at the base, ** spans directories,
    {a,b} expanded."""
    return ["/" + p.removeprefix("./").lstrip("/") for p in _expand_braces(pattern.strip())]


def _files_with_rg(rg: str, root: Path, exclude: Path) -> list[str] | None:
    """Every file under root that is not ignored, relative to root, from `rg --files` (the
    same rules as the walk, faster). The glob pattern is not passed to rg: a matching -g glob
    overrides .gitignore there. None when rg cannot answer (the caller walks instead)."""
    args = [rg, "--files", "--no-config", "--no-messages", "--hidden", "--no-require-git", "-g", "!.git"]
    if exclude.is_relative_to(root) and exclude != root:
        args += ["-g", "!/" + exclude.relative_to(root).as_posix()]
    try:
        proc = subprocess.run(args, cwd=root, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode not in (0, 1):  # 1: nothing matched
        return None
    return [os.fsdecode(line) for line in proc.stdout.split(b"\n") if line]


def _glob_spec(patterns: list[str], pattern: str) -> "pathspec.PathSpec":
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
        hint = "" if "/" in pattern else f" (patterns start at the base directory: use **/{pattern} to search subdirectories)"
        return ToolOutput(f"{head}: no files match{hint}", ResultFacts(found="no files match"))
    lines = [f"{head}: {_count(len(names), 'file')}, newest first", *names[:MAX_GLOB_FILES]]
    if len(names) > MAX_GLOB_FILES:
        lines.append(f"… capped at {MAX_GLOB_FILES} files")
    return ToolOutput("\n".join(lines), ResultFacts(found=_count(len(names), "file")))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}es" if noun.endswith("ch") else f"{n} {noun}s"
