"""The workspace overview: what the repository holds, in the system message of the first request.

A small model that sees the file names before its first call reads the right file instead of
grepping for one that does not exist. The overview is built from the sorted, .gitignore-aware
listing (workspace.py) when the system message is built (start, resume, /reset), so it is
byte-identical across a session's requests, like the rest of the prefix. Pure: a Listing in,
text out.
"""

from __future__ import annotations

from collections import Counter

from nanohermes.workspace import Listing

OVERVIEW_MAX_CHARS = 520  # ~140 o200k tokens of paths: with every tool offered the fixed cost stays under 1,300
OVERVIEW_HEADER = "Workspace files"
TOP_FILES = 12  # top-level files named in a large workspace (README, pyproject, …)


def workspace_overview(listing: Listing, limit: int = OVERVIEW_MAX_CHARS) -> str:
    """`Workspace files (3): a.py, b/c.py, d.md` when they fit in `limit` chars; else the
    directories with their file counts (one level down for the big ones) and the top-level files."""
    if not listing.files:
        return f"{OVERVIEW_HEADER}: none (the workspace is empty)."
    total = f"{len(listing):,}" + ("" if listing.complete else "+")
    whole = f"{OVERVIEW_HEADER} ({total}): " + ", ".join(listing.files)
    if listing.complete and len(whole) <= limit:
        return whole
    head = f"{OVERVIEW_HEADER}: {total} (glob or grep to see more)."
    top_files = [f for f in listing.files if "/" not in f]
    parts = [head]
    if top_files:
        shown = top_files[:TOP_FILES]
        more = f" and {len(top_files) - len(shown)} more" if len(top_files) > len(shown) else ""
        parts.append("Top level: " + ", ".join(shown) + more + ".")
    parts.append("Directories (files): " + ", ".join(f"{d} ({n})" for d, n in _directories(listing)) + ".")
    text = " ".join(parts)
    if len(text) <= limit:
        return text
    cut = text.rfind(", ", 0, limit - 3)
    return (text[:cut] if cut > 0 else text[: limit - 3]) + ", …"


def _directories(listing: Listing) -> list[tuple[str, int]]:
    """Top-level directories by file count, each followed by its own biggest subdirectories."""
    tops: Counter[str] = Counter()
    subs: Counter[str] = Counter()
    for f in listing.files:
        parts = f.split("/")
        if len(parts) > 1:
            tops[parts[0] + "/"] += 1
        if len(parts) > 2:
            subs[parts[0] + "/" + parts[1] + "/"] += 1
    ordered: list[tuple[str, int]] = []
    for top, n in sorted(tops.items(), key=lambda kv: (-kv[1], kv[0])):
        ordered.append((top, n))
        below = sorted(((d, m) for d, m in subs.items() if d.startswith(top)), key=lambda kv: (-kv[1], kv[0]))
        ordered += below[:3] if len(below) > 1 else []  # one subdirectory says nothing its parent did not
    return ordered
