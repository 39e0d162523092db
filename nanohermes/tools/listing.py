"""What the workspace holds: one sorted, .gitignore-aware listing of its files, capped.

The workspace overview (prompt/overview.py) and the notes that steer an empty search or a
missing path (tools/steering.py) both describe the workspace from this listing. It is
deterministic (sorted by path), so an overview built from it is byte-stable for an unchanged
tree, and it stops at SCAN_LIMIT files, so a workspace that is a whole home directory costs
a fraction of a second, not a full walk.
"""

from __future__ import annotations

import itertools
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from nanohermes.tools.paths import walk

SCAN_LIMIT = 5_000  # files looked at: more than a person's project holds; a home directory stops here


@dataclass(frozen=True)
class Listing:
    files: tuple[str, ...]  # workspace-relative POSIX paths, sorted
    complete: bool = True  # False: the scan stopped at SCAN_LIMIT, there are more

    def __len__(self) -> int:
        return len(self.files)

    def under(self, prefix: str) -> list[str]:
        """The files below a workspace-relative directory ("" or "." is the whole workspace)."""
        if prefix in ("", "."):
            return list(self.files)
        prefix = prefix.rstrip("/") + "/"
        return [f for f in self.files if f.startswith(prefix)]


def list_workspace(workspace: Path, exclude: Path | None = None, limit: int = SCAN_LIMIT) -> Listing:
    """The workspace's files (not .gitignored, not in .git, not under `exclude`: NanoHermes'
    home), at most `limit`, with rg when it is installed (three times faster), else the walk."""
    root = Path(workspace).resolve()
    listed = _list_with_rg(root, exclude, limit)
    if listed is None:
        listed = [rel for rel, _ in itertools.islice(walk(root, root, exclude=exclude), limit + 1)]
    files = sorted(p.replace(os.sep, "/") for p in listed)
    return Listing(tuple(files[:limit]), complete=len(files) <= limit)


def _list_with_rg(root: Path, exclude: Path | None, limit: int) -> list[str] | None:
    """`rg --files --sort path` (single-threaded, so the first `limit` files are always the
    same ones), read until limit + 1 files; None when rg is missing or fails."""
    from nanohermes.tools.search import exclusion_args, find_rg  # search imports paths; keep this module light

    rg = find_rg()
    if rg is None:
        return None
    args = [
        rg,
        "--files",
        "--sort",
        "path",
        "--no-config",
        "--no-messages",
        "--hidden",
        "--no-require-git",
        "-g",
        "!.git",
    ]
    args += exclusion_args(exclude, root)
    files: list[str] = []
    try:
        with subprocess.Popen(
            args, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        ) as proc:
            for line in proc.stdout:
                files.append(os.fsdecode(line.rstrip(b"\n")))
                if len(files) > limit:
                    proc.kill()
                    break
            code = proc.wait()
    except OSError:
        return None
    if len(files) <= limit and code not in (0, 1):  # 1: no files at all
        return None
    return files
