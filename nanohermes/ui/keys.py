"""The keyboard while a turn runs: Esc stops the turn as Ctrl-C does; what the user types shows
on an input line under the live status (never in an approval question, never echoed over the
live area), and Enter queues it, to be sent when the turn ends, as in Claude Code and Codex.

Up on an empty line takes the last queued message back to edit (Enter queues it again, Ctrl-U
drops it). What is left unsent when the turn ends starts the next prompt.

Terminal only. The watcher owns stdin while it runs: cbreak mode (no echo, no line editing;
signals stay on, so Ctrl-C works as ever) and a thread that reads it. It is stopped, and what
is still pending read, before anything else reads the keyboard; stopping keeps the line and the
queue (an approval question pauses it), `take_typed` and `take_queued` empty them.
"""

from __future__ import annotations

import os
import select
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

ESC = 0x1B
ESC_SEQUENCE_WAIT_S = 0.05  # the rest of an arrow key's sequence arrives within microseconds; a lone Esc has none
POLL_S = 0.05  # how soon stop() is noticed
READ_BYTES = 1024
BACKSPACES = (0x7F, 0x08)
ENTERS = (0x0D, 0x0A)
KILL_LINE = 0x15  # Ctrl-U, as in a shell
UP_ARROWS = (b"\x1b[A", b"\x1bOA")


def _sequence_end(data: bytes, i: int) -> int:
    """Index after the escape sequence starting at data[i] (ESC): CSI (`ESC [ … final`),
    SS3 (`ESC O x`), or Alt+key (`ESC x`)."""
    if i + 1 >= len(data):
        return i + 1
    if data[i + 1] == ord("["):
        j = i + 2
        while j < len(data) and not 0x40 <= data[j] <= 0x7E:
            j += 1
        return j + 1
    return i + 3 if data[i + 1] == ord("O") else i + 2


class KeyWatcher:
    def __init__(self, fd: int = 0):
        self.fd = fd
        self._typed = bytearray()  # the line being typed
        self._queued: list[str] = []
        self._lock = threading.Lock()  # the live area reads what the reader thread writes
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._saved = None

    @staticmethod
    def available(fd: int = 0) -> bool:
        try:
            import termios  # noqa: F401  (not on Windows)
        except ImportError:
            return False
        return os.isatty(fd)

    def start(self) -> None:
        import termios
        import tty

        try:
            self._saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd, termios.TCSANOW)
        except (termios.error, OSError):  # not our terminal after all: Ctrl-C still works
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="nanohermes-keys", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Give the keyboard back: keys still pending are kept as typed text, not left for a prompt."""
        import termios

        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        self._take_pending()
        termios.tcsetattr(self.fd, termios.TCSANOW, self._saved)

    @contextmanager
    def typed_ahead(self) -> Iterator[None]:
        """Around a prompt: what was typed while nothing read the keyboard (the REPL starting, a
        slash command, the moment between two prompts) is read in first — a line ended by Enter
        queued, the rest kept as typed — and until the prompt ends Enter stays a carriage return.
        (The terminal's cooked mode turns each Enter into a newline, which the prompt's line
        editor takes as Ctrl-J, a new line *in* the message: typed ahead, lines never went.)"""
        import termios

        try:
            saved = termios.tcgetattr(self.fd)
            attrs = termios.tcgetattr(self.fd)
            attrs[0] &= ~termios.ICRNL
            attrs[3] &= ~(termios.ICANON | termios.ECHO)  # a line half typed is readable too
            attrs[6][termios.VMIN], attrs[6][termios.VTIME] = 1, 0
            termios.tcsetattr(self.fd, termios.TCSANOW, attrs)
        except (termios.error, OSError):  # not our terminal after all
            saved = None
        try:
            if saved is not None:
                self._take_pending()
            yield
        finally:
            if saved is not None:
                termios.tcsetattr(self.fd, termios.TCSANOW, saved)

    def take_typed(self) -> str:
        """The line typed and not queued (for the next prompt), and forget it."""
        with self._lock:
            text = self._typed.decode("utf-8", "ignore")
            self._typed.clear()
        return text

    def take_queued(self) -> list[str]:
        """The messages queued with Enter, oldest first, and forget them."""
        with self._lock:
            queued, self._queued = self._queued, []
        return queued

    def snapshot(self) -> tuple[str, tuple[str, ...]]:
        """(the line being typed, the queued messages), for the live area."""
        with self._lock:
            return self._typed.decode("utf-8", "ignore"), tuple(self._queued)

    def _take_pending(self) -> None:
        """Keys already waiting, as typed text and queued lines (never a stop: no one is running)."""
        while self._readable(0):
            self._feed(os.read(self.fd, READ_BYTES), interrupting=False)

    def _readable(self, timeout: float) -> bool:
        try:
            return bool(select.select([self.fd], [], [], timeout)[0])
        except (OSError, ValueError):
            return False

    def _run(self) -> None:
        while not self._stop.is_set():
            if self._readable(POLL_S):
                try:
                    data = os.read(self.fd, READ_BYTES)
                except OSError:
                    return
                self._feed(data, interrupting=True)

    def _feed(self, data: bytes, interrupting: bool) -> None:
        i = 0
        while i < len(data):
            byte = data[i]
            if byte == ESC:
                if i + 1 == len(data) and self._readable(ESC_SEQUENCE_WAIT_S):
                    data += os.read(self.fd, READ_BYTES)
                if i + 1 == len(data):  # a lone Esc: stop the turn
                    if interrupting:
                        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
                    i += 1
                else:  # arrows, Alt+key: not text, not a stop (Up edits the last queued message)
                    end = _sequence_end(data, i)
                    if data[i:end] in UP_ARROWS:
                        self._edit_last()
                    i = end
                continue
            with self._lock:
                self._key(byte)
            i += 1

    def _key(self, byte: int) -> None:
        if byte in BACKSPACES:
            text = self._typed.decode("utf-8", "ignore")[:-1]
            self._typed[:] = text.encode("utf-8")
        elif byte in ENTERS:  # cbreak keeps ICRNL: Enter arrives as a newline
            text = self._typed.decode("utf-8", "ignore")
            if text.strip():
                self._queued.append(text)
            self._typed.clear()
        elif byte == KILL_LINE:
            self._typed.clear()
        elif byte >= 0x20 or byte == 0x09:
            self._typed.append(byte)

    def _edit_last(self) -> None:
        with self._lock:
            if not self._typed and self._queued:
                self._typed[:] = self._queued.pop().encode("utf-8")
