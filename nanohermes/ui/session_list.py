"""Sessions as rows of text, for `nanohermes sessions` and the REPL's /resume. Pure, and light
to import: listing must not load the model client or the terminal UI."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from nanohermes.storage.catalog import SessionInfo
from nanohermes.storage.session import TITLE_MAX_CHARS

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
    home = str(Path.home())
    text = "~" + path[len(home) :] if path == home or path.startswith(home + "/") else path
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def session_rows(infos: list[SessionInfo], width: int | None = None, numbered: bool = False) -> list[str]:
    """A header and one line per session: name, messages, size, last used, workspace, title.
    The title is cut to fit `width` (a terminal's); None keeps it whole (a pipe)."""
    number = (lambda n: f"{n:>3}. ") if numbered else (lambda n: "")
    pad = " " * len(number(1))
    fixed = (
        f"{pad}{'NAME':<{NAME_CHARS}}  {'MSGS':>5}  {'SIZE':>8}  {'LAST USED':<16}  {'WORKSPACE':<{WORKSPACE_CHARS}}  "
    )
    title_chars = max(MIN_TITLE_CHARS, width - len(fixed)) if width else TITLE_MAX_CHARS
    rows = [fixed + "TITLE"]
    for n, info in enumerate(infos, 1):
        count = "?" if info.messages is None else str(info.messages)
        if info.unreadable:
            count = "unreadable"
        when = datetime.fromtimestamp(info.last_used).strftime("%Y-%m-%d %H:%M")
        rows.append(
            f"{number(n)}{info.name:<{NAME_CHARS}}  {count:>5}  {human_size(info.size):>8}  {when:<16}  "
            f"{short_path(info.workspace):<{WORKSPACE_CHARS}}  {cut(info.title, title_chars)}".rstrip()
        )
    return rows


def others_note(shown: int, total: int, workspace: Path) -> str:
    """The line under a workspace's listing that says what --all would add."""
    others = total - shown
    where = short_path(str(workspace), len(str(workspace)) + 1)
    here = f"{shown} session(s) in {where}" if shown else f"no saved sessions in {where}"
    return here + (f" · {others} more elsewhere: nanohermes sessions --all" if others else "")
