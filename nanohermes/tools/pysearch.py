"""grep without ripgrep: the same walk and caps in pure Python, run in a child process.

Python's `re` backtracks, and a match in progress cannot be interrupted (not even by Ctrl-C):
`(a+)+$` against a long line of a's would hold the session for ever. So the search runs in a
child (`python -m nanohermes.tools.pysearch`, the request as JSON on stdin, the matches as
JSON on stdout) that search.py ends at its deadline. rg has no such problem: its regex engine
never backtracks.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from nanohermes.fileio import read_regular
from nanohermes.workspace import walk


def search(
    pattern: str,
    target: str,
    base: str,
    glob: str | None,
    ignore_case: bool,
    exclude: str | None,
    max_matches: int,
    max_file_bytes: int,
) -> dict:
    """{"matches": [[path relative to base, line, text], …], "stopped": bool} — what the child prints."""
    regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    root = Path(target)
    if root.is_file():  # as rg: a file named explicitly is searched whatever the filters say
        files = [(os.path.relpath(root, base), root)]
    else:
        import pathspec

        only = pathspec.GitIgnoreSpec.from_lines([glob]) if glob else None
        # rg matches -g against the path from its cwd, which is base
        files = (
            (rel, Path(entry.path))
            for rel, entry in walk(root, Path(base), exclude=Path(exclude) if exclude else None)
            if only is None or only.match_file(rel)
        )
    found = {"matches": [], "stopped": False}
    for rel, file in files:
        if not _search_file(regex, rel, file, found, max_matches, max_file_bytes):
            break
    return found


def _search_file(regex: re.Pattern, rel: str, file: Path, found: dict, max_matches: int, max_file_bytes: int) -> bool:
    """Add the file's matches to found; False once the cap is passed."""
    try:
        if file.stat().st_size > max_file_bytes:
            return True
        data = read_regular(file)
    except OSError:  # unreadable, vanished, or not a regular file after all
        return True
    if b"\0" in data:
        return True
    text = data.decode("utf-8", "replace")
    if not regex.search(text):  # most files do not match: one scan, no line split
        return True
    for number, line in enumerate(text.split("\n"), 1):  # "\n" only: splitlines() would shift numbers vs rg
        line = line.removesuffix("\r")
        if regex.search(line):
            if len(found["matches"]) == max_matches:
                found["stopped"] = True
                return False
            found["matches"].append([rel, number, line])
    return True


def main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    print(json.dumps(search(**request)))  # ensure_ascii: a name that is not UTF-8 crosses as \udcXX


if __name__ == "__main__":
    main()
