"""Watching a streamed reply from a thread beside the reading one.

The HTTP client's read timeout restarts with every byte, so a server that sends `: ping`
comments forever never times out. The watch counts what matters: the last chunk that carried
any of the reply. It tells the user once the server has been silent for `notice_after`
seconds from the start (a local model on a CPU can take minutes before its first token: it is
told, not aborted), and ends the connection after `timeout` seconds without any reply — or
FINISH_GRACE_S after the finish_reason, when a server keeps the connection open without ever
sending [DONE] (the finished reply is kept).

Ending the connection means shutting down its socket: a recv blocked in the reading thread
returns at once with an error, which the reader turns into a timeout (or keeps the reply).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

FINISH_GRACE_S = 2.0  # after the finish_reason: the usage chunk and [DONE] follow at once, or never
NOTICE_GROWTH = 2  # later notices at 2×, 4×, … the first wait: a reminder, not a ticker
RETRY_END_S = 0.1  # a deadline passed before the response headers came: how often to look again


class ReplyWatch:
    def __init__(self, timeout: float, notice_after: float, on_wait: Callable[[str], None], clock=time.monotonic):
        self.timeout, self.notice_after, self.on_wait, self._clock = timeout, notice_after, on_wait, clock
        self.started = clock()
        self._last = self.started  # the last moment the reply moved
        self._limit = timeout
        self._answered = False
        self._next_notice = notice_after if notice_after > 0 else None
        self._response = None
        # One lock: a notice is never printed while the reader renders the reply, and a change of
        # deadline (the finish_reason) wakes the watch at once.
        self._changed = threading.Condition()
        self._stopped = False
        self.timed_out = False
        self._thread = threading.Thread(target=self._run, name="nanohermes-reply-watch", daemon=True)

    def __enter__(self) -> ReplyWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        with self._changed:
            self._stopped = True
            self._changed.notify()

    def attach(self, response) -> None:
        """The HTTP response whose connection the watch may end (None for a recorded stream)."""
        self._response = response

    def progress(self) -> None:
        """A chunk carried some of the reply (a later deadline: the watch finds it when it wakes)."""
        with self._changed:
            self._last = self._clock()
            self._answered = True

    def finished(self) -> None:
        """The finish_reason arrived: what follows (usage, [DONE]) gets FINISH_GRACE_S."""
        with self._changed:
            self._last, self._limit, self._answered = self._clock(), min(FINISH_GRACE_S, self.timeout), True
            self._changed.notify()

    def _run(self) -> None:
        try:
            with self._changed:
                while not self._stopped:
                    self._changed.wait(max(self._check(), 0.01))
        except Exception:  # a thread's traceback would reach the terminal; the read timeout still holds
            pass

    def _check(self) -> float:
        """End the connection or say the server is slow when it is time; seconds until next time."""
        now = self._clock()
        if now - self._last >= self._limit:
            self.timed_out = True
            if self._end_connection():
                self._stopped = True
                return 0.0
            wake = RETRY_END_S  # the headers have not come yet: end it as soon as they do
        else:
            wake = self._last + self._limit - now
        if not self._answered and self._next_notice is not None:
            if now - self.started >= self._next_notice:
                self._notify(now - self.started)
            wake = min(wake, self.started + self._next_notice - now)
        return wake

    def _notify(self, waited: float) -> None:
        self._next_notice *= NOTICE_GROWTH
        try:
            self.on_wait(
                f"the server has not answered yet ({waited:.{0 if waited >= 10 else 1}f} s); still waiting, "
                "up to request_timeout = "
                f"{self.timeout:g} s without a reply (a local model on a CPU can take minutes over a long prompt). "
                "Ctrl-C stops the turn."
            )
        except Exception:  # a renderer's failure must not kill the watch
            pass

    def _end_connection(self) -> bool:
        """Shut the reply's socket down; False while there is no response to end yet."""
        sock = getattr(self._response, "socket", None)  # client.py's Response
        if sock is None:
            return False
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        return True
