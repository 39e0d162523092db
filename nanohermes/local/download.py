"""Downloading a model file once: into `<target>.part`, resumed with an HTTP Range request after a
dropped connection or an earlier run that was stopped, renamed into place when whole. A progress
bar on stderr. The checksum is local/models.py's to check.

Two NanoHermes processes fetching the same file take turns (a lock beside it): the second finds
the file whole when its turn comes.
"""

from __future__ import annotations

import http.client
import sys
import time
from pathlib import Path

from nanohermes.errors import LocalModelError

PIECE = 1024 * 1024  # bytes per read and write
READ_TIMEOUT = 60.0  # seconds without a byte before the connection counts as dropped (and is resumed)
ATTEMPTS = 5  # connections tried in a row without progress before giving up; one that brought bytes resets it
RETRY_PAUSE = 2.0  # seconds between attempts: a flaky network gets a moment
LOCK_WAIT = 6 * 3600.0  # seconds to wait for another process's download of the same file (a slow line)
BAR_WIDTH = 30  # characters of the bar itself
REDRAW_EVERY = 0.25  # seconds between redraws on a terminal
LINE_EVERY = 10  # percent between lines when stderr is not a terminal (a log gets ten lines, not thousands)
MB = 1_000_000
CLEAR_TO_END = "\x1b[K"  # a redrawn line shorter than the one before leaves no tail


def download(url: str, target: Path, size: int, progress=None) -> None:
    """`url` into `target` (its folder created), resuming a `.part` left before. `size`: the
    expected bytes (a bar's total when the server does not say; a longer .part starts over).
    LocalModelError, naming the URL and what failed, when it cannot be had."""
    from nanohermes.storage.locking import FileLock, holding

    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    with holding(FileLock(target.with_name(target.name + ".lock")), LOCK_WAIT, LocalModelError, target):
        if target.exists():  # another process finished it while this one waited
            return
        bar = progress or Progress()
        try:
            last_error = _attempts(url, part, size, bar)
        finally:
            bar.done()  # the bar's line ends, also on Ctrl-C (the .part stays, to be resumed)
        if last_error is None:
            part.replace(target)
            return
        kept = (
            f"; the {part.stat().st_size / MB:,.0f} MB fetched are kept and resumed next time" if part.exists() else ""
        )
        raise LocalModelError(
            f"Could not download {url} ({last_error}){kept}. Check the network (a proxy: HTTPS_PROXY), "
            "or download the file yourself and pass --model-file PATH."
        )


def _attempts(url: str, part: Path, size: int, bar) -> str | None:
    """Connections until the file is whole (None) or ATTEMPTS in a row brought nothing (the last error)."""
    failures, last_error = 0, ""
    while failures < ATTEMPTS:
        before = part.stat().st_size if part.exists() else 0
        try:
            if _fetch_into(url, part, size, bar):
                return None
        except (OSError, http.client.HTTPException) as exc:  # refused, reset, cut short, timed out, a 5xx: resumed
            last_error = _reason(exc)
        now = part.stat().st_size if part.exists() else 0
        failures = 0 if now > before else failures + 1
        if failures < ATTEMPTS:
            time.sleep(RETRY_PAUSE)
    return last_error or "the connection ended early"


def _fetch_into(url: str, part: Path, size: int, bar) -> bool:
    """One connection: the rest of the file appended to `part` (or all of it, when the server
    ignores the range). True when the server said the file is complete."""
    import urllib.error
    import urllib.request

    from nanohermes import __version__
    from nanohermes.provider.transport import tls_context

    have = part.stat().st_size if part.exists() else 0
    if have > size:  # not a prefix of this file
        part.unlink()
        have = 0
    headers = {"User-Agent": f"nanohermes/{__version__}"}
    if have:
        headers["Range"] = f"bytes={have}-"
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=tls_context()))
    try:
        response = opener.open(urllib.request.Request(url, headers=headers), timeout=READ_TIMEOUT)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # nothing left past what we have: the part is whole (or wrong: the checksum says)
            return True
        if exc.code >= 500 or exc.code == 429:  # the server's trouble, maybe passing: tried again
            raise
        raise LocalModelError(f"Could not download {url}: HTTP {exc.code} {exc.reason}.") from None
    with response:
        resumed = response.status == 206 and _range_start(response.headers.get("Content-Range")) == have
        length = response.headers.get("Content-Length")
        total = (have if resumed else 0) + int(length) if length and length.isdigit() else size
        bar.start(have if resumed else 0, total)
        with open(part, "ab" if resumed else "wb") as out:
            while piece := response.read(PIECE):
                out.write(piece)
                bar.advance(len(piece))
            return out.tell() >= total


def _range_start(content_range: str | None) -> int | None:
    """`bytes 1000-1999/2000` → 1000."""
    try:
        return int(content_range.split()[1].split("-")[0])
    except (AttributeError, IndexError, ValueError):
        return None


def _reason(exc: Exception) -> str:
    reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None)
    return str(reason or exc) or type(exc).__name__


class Progress:
    """A bar on stderr: redrawn in place on a terminal, a line per LINE_EVERY percent elsewhere."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.done_bytes = self.total = 0
        self._started = self._drawn = 0.0
        self._from = 0
        self._line_percent = -LINE_EVERY
        self._shown = False

    def start(self, done: int, total: int) -> None:
        self.done_bytes, self.total, self._from = done, max(total, 1), done
        self._started = time.monotonic()
        self._draw(force=True)

    def advance(self, n: int) -> None:
        self.done_bytes += n
        self._draw()

    def done(self) -> None:
        """The bar's last state, on a line of its own."""
        if self._shown and self.tty:
            self.stream.write("\r" + self.line() + CLEAR_TO_END + "\n")
        elif self._shown and self._line_percent < 100:
            self.stream.write(self.line() + "\n")
        self.stream.flush()
        self._shown = False

    def line(self) -> str:
        percent = min(100, self.done_bytes * 100 // self.total)
        filled = BAR_WIDTH * percent // 100
        elapsed = time.monotonic() - self._started
        speed = (self.done_bytes - self._from) / elapsed / MB if elapsed > 0 else 0.0
        return (  # ~60 columns: the file's name was said on the line before, and a wrapped line breaks the redraw
            f"  [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {percent:3d}% "
            f"{self.done_bytes / MB:,.0f}/{self.total / MB:,.0f} MB {speed:.1f} MB/s"
        )

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.tty:
            if force or now - self._drawn >= REDRAW_EVERY:
                self.stream.write("\r" + self.line() + CLEAR_TO_END)
                self._drawn, self._shown = now, True
        else:
            percent = self.done_bytes * 100 // self.total
            if force or percent >= self._line_percent + LINE_EVERY:
                self.stream.write(self.line() + "\n")
                self._line_percent, self._shown = percent - percent % LINE_EVERY, True
        self.stream.flush()
