"""An exclusive lock file (POSIX flock): one writer per session or memory file.

flock locks belong to the open file: the kernel drops them when the process exits, however
it exits, so a crash never leaves a stale lock behind. (10 lines of stdlib instead of a
dependency that costs ~11 ms to import on every start.)"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

POLL_S = 0.05


class LockTimeout(Exception):
    pass


class FileLock:
    def __init__(self, path: Path | str):
        self.path = str(path)
        self._fd: int | None = None

    def acquire(self, timeout: float = 0.0) -> None:
        """Take the lock, waiting up to `timeout` seconds; LockTimeout if another holder keeps it."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._fd = fd
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise LockTimeout(self.path) from None
                time.sleep(POLL_S)

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
