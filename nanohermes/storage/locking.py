"""An exclusive lock file (POSIX flock): one writer per session, memory or grants file; and the
atomic replace those files are written with.

flock locks belong to the open file: the kernel drops them when the process exits, however
it exits, so a crash never leaves a stale lock behind. (10 lines of stdlib instead of a
dependency that costs ~11 ms to import on every start.)"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from contextlib import contextmanager
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


@contextmanager
def holding(lock: FileLock, timeout: float, error: type[Exception], path: Path | str):
    """The lock held for a `with` block; a timeout or a lock file that cannot be opened becomes
    `error` with a message naming `path` (the file the lock guards)."""
    try:
        lock.acquire(timeout=timeout)
    except LockTimeout as exc:
        raise error(f"{path} is locked by another NanoHermes process (waited {timeout:g} s); try again") from exc
    except OSError as exc:  # the lock's path is a directory, or the state directory is read-only
        raise error(f"cannot lock {path}: {lock.path} cannot be opened ({exc.strerror})") from None
    try:
        yield
    finally:
        lock.release()


def replace_atomically(path: Path, data: bytes, prefix: str, error: type[Exception]) -> None:
    """`path` holds `data`, or what it held before: a temp file (mkstemp: mode 0600) in the same
    directory, synced, then renamed over it. A temp file that cannot be made becomes `error`."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=".tmp")
    except OSError as exc:  # a read-only state directory: say so, never crash the turn
        raise error(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
