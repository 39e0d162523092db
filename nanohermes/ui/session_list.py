"""Sessions as rows of text, for `nanohermes sessions` and the REPL's /resume. Pure, and light
to import: listing must not load the model client or the terminal UI."""

from __future__ import annotations

import unicodedata
from datetime import datetime
from pathlib import Path

from nanohermes.storage.catalog import SessionInfo
from nanohermes.storage.session import TITLE_MAX_CHARS
from nanohermes.text import neutralize

MIN_TITLE_CHARS = 20  # below this a title says nothing; the row wraps instead
WORKSPACE_CHARS = 24  # long paths keep their tail (the project's own folder name)
NAME_CHARS = 20  # a generated name (20261201-070720-d29f) fits exactly


def human_size(size: float) -> str:
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def short_path(path: str | None, limit: int = WORKSPACE_CHARS) -> str:
    """`~/src/proj` for a path under the home directory; `…/deep/proj` when too long; `?` if unknown."""
    if not path:
        return "?"
    path, home = neutralize(path), str(Path.home())  # a directory name may hold ESC
    text = "~" + path[len(home) :] if path == home or path.startswith(home + "/") else path
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def cell_width(text: str) -> int:
    """Terminal columns `text` takes: East Asian wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def cut(text: str, limit: int) -> str:
    """`text` on one line, within `limit` terminal columns (an ellipsis where it was cut), its
    control characters shown (a title is the first request: whatever was typed or piped)."""
    text = neutralize(" ".join(text.split()))
    if cell_width(text) <= limit:
        return text
    kept, used = [], 0
    for ch in text:
        used += cell_width(ch)
        if used > limit - 1:
            break
        kept.append(ch)
    return "".join(kept) + "…"


# Columns left out, in this order, when a terminal is too narrow for them and a useful title.
DROPPED_WHEN_NARROW = ("WORKSPACE", "SIZE", "MSGS")


def _cells(info: SessionInfo) -> dict[str, str]:
    count = "?" if info.messages is None else str(info.messages)
    return {
        "NAME": f"{info.name:<{NAME_CHARS}}",
        "MSGS": f"{'unreadable' if info.unreadable else count:>5}",
        "SIZE": f"{human_size(info.size):>8}",
        "LAST USED": f"{datetime.fromtimestamp(info.last_used).strftime('%Y-%m-%d %H:%M'):<16}",
        "WORKSPACE": f"{short_path(info.workspace):<{WORKSPACE_CHARS}}",
    }


HEADERS = {
    "NAME": f"{'NAME':<{NAME_CHARS}}",
    "MSGS": f"{'MSGS':>5}",
    "SIZE": f"{'SIZE':>8}",
    "LAST USED": f"{'LAST USED':<16}",
    "WORKSPACE": f"{'WORKSPACE':<{WORKSPACE_CHARS}}",
}


def session_rows(infos: list[SessionInfo], width: int | None = None, numbered: bool = False) -> list[str]:
    """A header and one line per session: name, messages, size, last used, workspace, title.
    Within `width` (a terminal's): the title is cut to what is left, and when that would be under
    MIN_TITLE_CHARS the workspace, size and count columns go first; no row is wider. None keeps
    every column and whole titles (a pipe)."""
    number = (lambda n: f"{n:>3}. ") if numbered else (lambda n: "")
    pad = " " * len(number(1))
    columns = list(HEADERS)

    def fixed() -> int:
        return len(pad) + sum(len(HEADERS[c]) + 2 for c in columns)

    for column in DROPPED_WHEN_NARROW:
        if width is None or fixed() + MIN_TITLE_CHARS <= width:
            break
        columns.remove(column)
    title_chars = max(0, width - fixed()) if width else TITLE_MAX_CHARS
    rows = [pad + "".join(HEADERS[c] + "  " for c in columns) + "TITLE"[: title_chars or None]]
    for n, info in enumerate(infos, 1):
        cells = _cells(info)
        family = f"(fork of {info.forked_from}) " if info.forked_from else ""  # the family: a fork names its parent
        title = cut(family + info.title, title_chars) if title_chars else ""
        rows.append((number(n) + "".join(cells[c] + "  " for c in columns) + title).rstrip())
    return [row[:width].rstrip() if width else row for row in rows]


def others_note(shown: int, total: int, workspace: Path) -> str:
    """The line under a workspace's listing that says what --all would add."""
    others = total - shown
    where = short_path(str(workspace), len(str(workspace)) + 1)
    here = f"{shown} session(s) in {where}" if shown else f"no saved sessions in {where}"
    return here + (f" · {others} more elsewhere: nanohermes sessions --all" if others else "")
