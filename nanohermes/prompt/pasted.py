"""Image paths a person pasted into a request: a screenshot dragged into the terminal arrives as
its absolute path, quoted (`'/tmp/Screenshot 2025-01-02 at 10.00.00.png'`), backslash-escaped
(`/tmp/Screenshot\\ 2025.png`), plain, or as a file:// URI. Such a path names the image wherever it
is (a screenshot is rarely in the workspace), in the user's typed words only, and passes the rule
for the user's own files (repo_files.py): never a hidden path (credentials) or NanoHermes's state
directory. Only a name that promises an image counts (its bytes must then be one: prompt/mentions.py).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote

from nanohermes.errors import ImagesRefused
from nanohermes.repo_files import USER, Boundary, RefusedFile
from nanohermes.tools import ToolContext

_START = r"(?:/|~/|file://)"
_PASTED = re.compile(
    rf"'({_START}[^'\n]+)'"  # quoted, as GNOME's terminals paste a dropped file
    rf'|"({_START}[^"\n]+)"'
    rf"|(?<![^\s(\[])({_START}(?:\\.|[^\s\\'\"\)\]])+)"  # escaped spaces, as macOS's Terminal and iTerm2 paste it
)


def pasted_images(text: str, ctx: ToolContext, suffixes: tuple[str, ...]) -> list[Path]:
    """The existing files whose absolute paths `text` holds and whose names end in one of `suffixes`,
    resolved, in order. ImagesRefused for a path the rule refuses."""
    found: list[Path] = []
    for match in _PASTED.finditer(text):
        raw = next(group for group in match.groups() if group)
        path = _as_path(raw)
        if not path.name.lower().endswith(suffixes) or not path.is_file():
            continue
        try:
            real = Boundary.for_tools(ctx).check(path, owner=USER)
        except RefusedFile as exc:
            raise ImagesRefused(f"Your request was not sent: {exc}.") from None
        if real not in found:
            found.append(real)
    return found


def _as_path(raw: str) -> Path:
    if raw.startswith("file://"):
        raw = unquote(raw.removeprefix("file://"))
    else:
        raw = re.sub(r"\\(.)", r"\1", raw)  # `Screen\ Shot.png` -> `Screen Shot.png`
    return Path(os.path.expanduser(raw))
