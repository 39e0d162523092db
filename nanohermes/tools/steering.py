"""Notes that steer a model after a look that found nothing: what does exist, and to read it.

Small models answer from imagination when a search comes back empty: asked which port a
service uses, Qwen2.5-Coder-1.5B grepped `*.py`, got "no matches" and answered 8080 (the port
was in config/settings.ini). Told instead that no `*.py` file exists, shown the file that
does and told to read it before answering, the same model read it. So an empty grep or glob,
a missing path and a command that failed without printing a word end with a short note built
from the workspace listing: in a small workspace its files; in a larger one the names that
look like what was asked for and where the files are. Pure: they take a Listing and return
text.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path, PurePosixPath

from nanohermes.workspace import Listing, list_workspace, state_dir

SMALL_WORKSPACE_FILES = 50  # up to this many files, a note names them (as many as fit)
NOTE_MAX_CHARS = 500  # a hint, not a listing: ~130 tokens, well inside a 4K window's result cap
RELATED_NAMES = 5  # names that look like the search, in a large workspace
TOP_GROUPS = 5  # directories or file types named in a large workspace
WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{2,}")  # words of a pattern worth finding in file names
NAMED_SCAN_BYTES = 65_536  # of a searched file, looked through for the names of other files
READ_FIRST = "Read the file likely to hold the answer (read_file) before answering; don't guess."


def names(files: list[str], budget: int) -> str:
    """`a.py, src/b.py and 12 more`, within about `budget` chars."""
    shown: list[str] = []
    used = 0
    for name in files:
        if shown and used + len(name) + 2 > budget:
            break
        shown.append(name)
        used += len(name) + 2
    rest = len(files) - len(shown)
    return ", ".join(shown) + (f" and {rest} more" if rest else "")


def related_first(files: list[str], pattern: str) -> list[str]:
    """The files whose path contains a word of the pattern first, the rest after, each in order."""
    words = [w.lower() for w in WORD.findall(pattern)]
    hits = [f for f in files if any(w in f.lower() for w in words)]
    return hits + [f for f in files if f not in hits]


def workspace_files(listing: Listing, pattern: str = "", budget: int = NOTE_MAX_CHARS) -> str:
    """`The workspace has 3 files: …` (small), or the names like the pattern and the top
    directories (large)."""
    if not listing.files:
        return "The workspace is empty."
    if listing.complete and len(listing) <= SMALL_WORKSPACE_FILES:
        return (
            f"The workspace has {_files(len(listing))}: {names(related_first(list(listing.files), pattern), budget)}."
        )
    parts = []
    words = [w.lower() for w in WORD.findall(pattern)]
    alike = [f for f in listing.files if any(w in PurePosixPath(f).name.lower() for w in words)]
    if alike:
        parts.append(f"Files named like it: {names(alike[:RELATED_NAMES], budget // 2)}.")
    total = f"{len(listing):,}" + ("" if listing.complete else "+")
    parts.append(f"The workspace has {total} files; most in {_top_directories(listing)}.")
    return " ".join(parts)


def grep_miss_note(
    listing: Listing, scope: str, glob: str | None, in_glob: list[str], pattern: str, named: list[str] | None = None
) -> str:
    """After grep found nothing under `scope`: `in_glob` are the files there the glob filter lets
    through (all of them without a glob). `named` (a search of one file): the workspace files
    that file names, which come first."""
    if named is not None:
        return _one_file_miss(listing, scope, named, pattern)
    if glob and not in_glob:
        where = "" if scope in ("", ".") else f" under {scope}"
        head = f"No file{where} matches glob {glob!r}."
        if len(listing) > SMALL_WORKSPACE_FILES or not listing.complete:
            head += f" Files there by type: {_by_type(listing.under(scope))}."
    else:
        head = f"No line of the {_files(len(in_glob))} searched matches."
        if " " in pattern.strip() or len(pattern) > 30:
            head += " A regex matches within one line: try one word of it, or ignore_case."
    return _note(head, lambda budget: workspace_files(listing, pattern, budget), READ_FIRST)


def _one_file_miss(listing: Listing, searched: str, named: list[str], pattern: str) -> str:
    """A file that does not have it: the files it names (settings.ini from a loader, a module
    from an import) are where to look next; the same model that read the first file listed
    went on to the file it named only when that came first (tried on Qwen2.5-Coder-1.5B)."""
    head = f"No line of {searched} matches."
    if named:
        head += f" Files it names: {names(named, NOTE_MAX_CHARS // 3)}."
    rest = [f for f in listing.files if f != searched and f not in named]
    if not (listing.complete and len(listing) <= SMALL_WORKSPACE_FILES):
        return _note(head, lambda budget: workspace_files(listing, pattern, budget), READ_FIRST)
    if not rest:
        return _note(head, lambda budget: "", READ_FIRST)
    return _note(head, lambda budget: f"Other files: {names(related_first(rest, pattern), budget)}.", READ_FIRST)


def named_files(text: str, files: list[str] | tuple[str, ...], searched: str) -> list[str]:
    """The files (other than `searched`) whose name appears in `text`: `settings.ini`, or a
    module's dotted or slashed path without `.py` (`shop.pricing`, `shop/pricing`)."""
    found = []
    for f in files:
        if f == searched:
            continue
        path = PurePosixPath(f)
        stem = str(path.with_suffix("")) if path.suffix == ".py" else ""
        if stem.endswith("/__init__"):
            stem = stem.removesuffix("/__init__")
        if (len(path.name) > 4 and path.name in text) or (
            stem and "/" in stem and (stem in text or stem.replace("/", ".") in text)
        ):
            found.append(f)
    return found


def glob_miss_note(listing: Listing, scope: str, pattern: str) -> str:
    """After glob matched nothing under `scope`: other files with the pattern's stem, the
    file types there, or in a small workspace its files."""
    head = ""
    if len(listing) > SMALL_WORKSPACE_FILES or not listing.complete:
        stem = PurePosixPath(pattern).name.split(".")[0].strip("*?[]{}")
        same_stem = [f for f in listing.under(scope) if stem and PurePosixPath(f).name.startswith(stem)]
        if same_stem:
            head = f"Files named {stem}.*: {names(same_stem[:RELATED_NAMES], 200)}. "
        head += f"Files there by type: {_by_type(listing.under(scope))}."
    return _note(head, lambda budget: workspace_files(listing, pattern, budget), READ_FIRST)


def silent_command_note(listing: Listing, command: str) -> str:
    """After a command that failed and printed nothing (a `grep` or `find | grep` that found
    nothing, a `netstat | grep 8080` asked of a machine instead of the repository): what the
    workspace holds, the files named like the command's words first."""
    return _note("It printed nothing.", lambda budget: workspace_files(listing, command, budget), READ_FIRST)


# What a test runner prints when it found no test to run: unittest's discovery (test*.py files
# only), pytest given nothing it collects.
NO_TESTS = re.compile(r"^Ran 0 tests in |\bcollected 0 items\b|\bno tests ran in \d", re.M)


def no_tests_note(output: str) -> str:
    """After a test run that ran no test: that it proves nothing, and how to name the tests.
    Qwen2.5-Coder-1.5B ran `python3 -m unittest` beside a leap_test.py (discovery wants
    test*.py), read "Ran 0 tests … OK" and answered that the tests passed."""
    if not NO_TESTS.search(output):
        return ""
    return (
        "No test ran: this says nothing about the code. Name the test file: `python -m pytest NAME_test.py` "
        "(`python -m unittest` alone finds only files named test*.py)."
    )


PY_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)', re.M)


def raised_in_note(output: str, workspace: Path) -> str:
    """After a command that failed with a Python traceback: the innermost frame in the
    workspace's own files, and to read that file first. Qwen2.5-Coder-1.5B, given a test's
    traceback that ended in another module, edited that module from the traceback's one line
    (old_text not found) or only described a fix. Told where the error was raised and to read
    it "before changing anything", it often gave that sentence back as its answer; worded as the
    next step, it read the file (4 of 4 tries)."""
    root = workspace.resolve()
    for path, line, name in reversed(PY_FRAME.findall(output)):
        file = Path(path) if Path(path).is_absolute() else root / path
        try:
            shown = file.resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            continue  # the standard library, site-packages: not where the fix goes
        return f"Next, read {shown} with read_file: the error was raised there, at line {line} (in {name})."
    return ""


def missing_path_note(listing: Listing, wanted: str) -> str:
    """After a path that does not exist: the workspace's files when it is small; in a large
    one the directories holding files of the same type (the closest paths are named by the
    caller)."""
    if not listing.files:
        return "The workspace has no files."
    if listing.complete and len(listing) <= SMALL_WORKSPACE_FILES:
        return _note("", lambda budget: workspace_files(listing, wanted, budget), READ_FIRST)
    suffix = PurePosixPath(wanted).suffix
    alike = [f for f in listing.files if suffix and f.endswith(suffix)]
    if not alike:
        return ""
    tops: Counter[str] = Counter(_top(f) for f in alike)
    where = ", ".join(f"{d} ({n})" for d, n in tops.most_common(TOP_GROUPS))
    return _note(f"{suffix} files are in {where}.", lambda budget: "", READ_FIRST)


def _by_type(files: list[str]) -> str:
    """`.py 40 (src/), .md 3 (., docs/)`: the commonest extensions and where they are."""
    kinds: Counter[str] = Counter()
    where: dict[str, Counter[str]] = {}
    for f in files:
        path = PurePosixPath(f)
        kind = path.suffix or path.name  # Makefile, Dockerfile: the name is the type
        kinds[kind] += 1
        where.setdefault(kind, Counter())[path.parts[0] + "/" if len(path.parts) > 1 else "."] += 1
    shown = []
    for kind, n in kinds.most_common(TOP_GROUPS):
        dirs = ", ".join(d for d, _ in where[kind].most_common(2))
        shown.append(f"{kind} {n} ({dirs})")
    return ", ".join(shown) or "none"


def _top_directories(listing: Listing) -> str:
    tops: Counter[str] = Counter(_top(f) for f in listing.files)
    return ", ".join(f"{d} ({n})" for d, n in tops.most_common(TOP_GROUPS))


def _top(path: str) -> str:
    return path.split("/")[0] + "/" if "/" in path else "."


def _files(n: int) -> str:
    return "1 file" if n == 1 else f"{n} files"


FRAME_CHARS = 60  # what workspace_files adds around the names it is given a budget for


def _note(head: str, middle, tail: str) -> str:
    """head, the middle (built for the chars left) and tail, at most NOTE_MAX_CHARS."""
    budget = max(NOTE_MAX_CHARS - len(head) - len(tail) - FRAME_CHARS, 40)
    note = " ".join(p for p in (head, middle(budget), tail) if p)
    return note if len(note) <= NOTE_MAX_CHARS else note[: NOTE_MAX_CHARS - 1] + "…"


# -- listing the workspace for a tool ---------------------------------------------------------


def glob_filter(files: list[str], glob: str) -> list[str]:
    """The files grep's `glob` lets through, matched as the Python search matches it (gitignore
    rules on the workspace-relative path, as rg's -g)."""
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines([glob])
    return [f for f in files if spec.match_file(f)]


def grep_note_for(ctx, target: Path, glob: str | None, pattern: str) -> str:
    """The note for a grep that found nothing in `target` ("" outside the workspace)."""
    scope = _scope(ctx, target)
    if scope is None:
        return ""
    listing = list_workspace(ctx.workspace, state_dir(ctx.home))
    if target.is_file() and not glob:
        from nanohermes.fileio import read_regular

        try:
            text = read_regular(target, NAMED_SCAN_BYTES).decode("utf-8", "replace")
        except OSError:  # swapped for a FIFO since the search: name nothing
            text = ""
        return grep_miss_note(listing, scope, None, [scope], pattern, named_files(text, listing.files, scope))
    in_scope = [scope] if target.is_file() else listing.under(scope)
    return grep_miss_note(listing, scope, glob, glob_filter(in_scope, glob) if glob else in_scope, pattern)


def glob_note_for(ctx, root: Path, pattern: str) -> str:
    scope = _scope(ctx, root)
    return "" if scope is None else glob_miss_note(list_workspace(ctx.workspace, state_dir(ctx.home)), scope, pattern)


def silent_command_note_for(ctx, command: str) -> str:
    return silent_command_note(list_workspace(ctx.workspace, state_dir(ctx.home)), command)


def missing_path_note_for(ctx, raw: str) -> str:
    return missing_path_note(list_workspace(ctx.workspace, state_dir(ctx.home)), raw)


def _scope(ctx, path: Path) -> str | None:
    workspace = ctx.workspace.resolve()
    if not path.is_relative_to(workspace):
        return None
    return path.relative_to(workspace).as_posix() if path != workspace else "."
