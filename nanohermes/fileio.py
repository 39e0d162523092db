"""Reading a file that may turn out not to be one: a FIFO blocks the reader until a writer comes
(forever), a device such as /dev/zero never ends, a socket cannot be read at all.

open_regular opens without blocking and checks what it opened (fstat on the open descriptor,
so nothing can be swapped in between); anything but a regular file is NotRegularFile, an
OSError, so callers that already treat an unreadable file as skipped need nothing more.
read_bounded is how the agent reads its own state (config, memory, checkpoints): a regular
file, whole, up to a limit, else an OSError that says which.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

_KIND = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


class NotRegularFile(OSError):
    """The path is a FIFO, device, socket or directory; `kind` says which."""

    def __init__(self, path, kind: str):
        super().__init__(errno.EINVAL, f"not a regular file: {kind}", str(path))
        self.kind = kind


def kind_of(mode: int) -> str:
    return _KIND.get(stat.S_IFMT(mode), "not a regular file")


def open_regular(path, *, dir_fd: int | None = None, follow_symlinks: bool = True) -> BinaryIO:
    """`path` opened for reading in binary mode, or NotRegularFile (never blocks on a FIFO).
    `dir_fd`: `path` is relative to that directory; without `follow_symlinks` a symlink is
    OSError ELOOP."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, kind_of(mode))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path, limit: int = -1) -> bytes:
    """The bytes of a regular file (at most `limit`), or NotRegularFile."""
    with open_regular(path) as f:
        return f.read(limit)


class TooBig(OSError):
    """A regular file holds more than a reader takes (a state file swapped for a huge one)."""

    def __init__(self, path, limit: int):
        super().__init__(errno.EFBIG, f"bigger than {limit:,} bytes", str(path))
        self.limit = limit


def read_bounded(path, limit: int) -> bytes:
    """The whole of a regular file of at most `limit` bytes; NotRegularFile or TooBig, never a
    silent cut: for the agent's own state, which a cut would corrupt."""
    data = read_regular(path, limit + 1)
    if len(data) > limit:
        raise TooBig(path, limit)
    return data


def create_regular(path, mode: int = 0o600) -> BinaryIO:
    """`path` created or truncated for writing in binary mode; NotRegularFile when something
    else is there (a FIFO would block the opener until a reader came), and a symlink is not
    followed (it would truncate whatever it points at)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # what a non-blocking open for writing says of a FIFO without a reader
            raise NotRegularFile(path, _KIND[stat.S_IFIFO]) from None
        raise
    try:
        st_mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(st_mode):
            raise NotRegularFile(path, kind_of(st_mode))
        os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


PRIVATE_DIR_MODE = 0o700  # the agent's own state: sessions, and checkpoints that copy the workspace's files


def make_private_dirs(path) -> None:
    """`path` and every missing directory above it made PRIVATE_DIR_MODE (mkdir(parents=True) makes
    the parents with the default mode, 0755: checkpoints/SESSION readable by every user)."""
    path = os.fspath(path)
    missing = []
    while path and not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, PRIVATE_DIR_MODE)
        except FileExistsError:  # made by another process meanwhile
            continue
