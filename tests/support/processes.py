"""Whether a process the test started (or one its children started) is still running."""

from __future__ import annotations


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for a reaper (a container's pid 1 may never reap)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (FileNotFoundError, ProcessLookupError):
        return False
