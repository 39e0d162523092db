"""The REPL in a real pseudo-terminal, its output played into a terminal emulator (pyte) with
a scrollback, so a test can assert what a user would see on the screen and above it.

pexpect reads the child and keeps the tests in step (`expect`); everything it reads is also
fed to the emulator. Rows and columns are the pty's and the emulator's alike. `resize` changes
both, the way tmux does: lines longer than the new width are re-wrapped (pyte alone cuts them).
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time

import pexpect
import pyte

from tests.support.timing import HANG_GUARD_S

BIN = os.path.join(os.path.dirname(sys.executable), "nanohermes")
HISTORY_LINES = 10_000

PROMPT_LINE = re.compile(r"([\w-]+ )?›( |$)")  # the REPL's prompt, in any mode (ui/repl.py)


class _Feed:
    """pexpect's logfile_read: every chunk read from the child goes to the emulator too."""

    def __init__(self, stream: pyte.Stream):
        self.stream = stream

    def write(self, data: str) -> None:
        self.stream.feed(data)

    def flush(self) -> None:
        pass


def _wait_stopped(pid: int, timeout: float = HANG_GUARD_S) -> None:
    """Until the process `pid` is stopped (state T in /proc)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as stat:
            if stat.read().rpartition(")")[2].split()[0] == "T":
                return
        time.sleep(0.005)
    raise AssertionError(f"process {pid} did not stop")


class Child(pexpect.spawn):
    """pexpect.spawn for a NanoHermes process: an `expect` that times out ends the child with
    SIGABRT, and its Python stacks (faulthandler, every thread) go into the error, so a hang
    seen once under load says where each thread stood. (A test that expects a timeout puts
    pexpect.TIMEOUT among its patterns: then nothing is raised and the child lives on.)"""

    def __init__(self, command: str, args: list[str], env: dict | None = None, **kwargs):
        super().__init__(command, args, env={**(env or os.environ), "PYTHONFAULTHANDLER": "1"}, **kwargs)
        self.screen_text = self._last_bytes  # what a user would see, when an emulator keeps it (Terminal)

    def expect(self, pattern, timeout: float = -1, searchwindowsize: int = -1, async_: bool = False, **kw):
        try:
            return super().expect(pattern, timeout=timeout, searchwindowsize=searchwindowsize, async_=async_, **kw)
        except pexpect.TIMEOUT:
            raise pexpect.TIMEOUT(self.hang_report(f"{pattern!r} never came")) from None

    def _last_bytes(self) -> str:
        return f"(no emulator; the last bytes read) {str(self.before)[-2000:]!r}"

    def hang_report(self, what: str) -> str:
        screen = self.screen_text()  # before the dump lands on it
        return f"{what}; the screen:\n{screen}\nthe child's stacks:\n{self.stacks()}"

    def stacks(self) -> str:
        """Abort the child and return what it printed on the way out (faulthandler's dump)."""
        seen = ""
        try:
            os.kill(self.pid, signal.SIGABRT)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                seen += super().read_nonblocking(65536, timeout=1)
        except (pexpect.EOF, pexpect.TIMEOUT, OSError):
            pass
        start = seen.find("Fatal Python error")
        return seen[start:] if start >= 0 else seen[-4000:]


class Terminal:
    def __init__(
        self,
        server,
        workspace,
        *args,
        rows: int = 30,
        cols: int = 100,
        colour: bool = False,
        timeout: float = HANG_GUARD_S,  # an expect's wait: a loaded 2-core machine drew one screen in over 20 s
        size_in_env: bool = True,
        wait_ready: bool = True,
        env: dict | None = None,  # more of the environment (COLORFGBG, …)
    ):
        # No cursor-position request: pexpect does not answer it, and keys typed while
        # prompt_toolkit waits for the answer would be misread.
        extra_env = env
        env = {
            **os.environ,
            "TERM": "xterm-256color",
            "COLUMNS": str(cols),
            "LINES": str(rows),
            "PROMPT_TOOLKIT_NO_CPR": "1",
        }
        if colour:
            env.pop("NO_COLOR", None)
        env.update(extra_env or {})
        if not size_in_env:  # the size from the pty alone, so a resize is seen (rich keeps $COLUMNS for ever)
            env.pop("COLUMNS")
            env.pop("LINES")
        self.rows, self.cols = rows, cols
        self.screen = pyte.HistoryScreen(cols, rows, history=HISTORY_LINES, ratio=0.5)
        self.child = Child(
            BIN,
            ["--base-url", server.url, *args],
            cwd=str(workspace),
            env=env,
            encoding="utf-8",
            timeout=timeout,
            dimensions=(rows, cols),
        )
        self.child.logfile_read = _Feed(pyte.Stream(self.screen))
        self.child.screen_text = self.capture
        if wait_ready:  # else a question comes first (the workspace's hooks), and the test answers it
            self.started()

    # -- driving ---------------------------------------------------------------------------

    def started(self) -> None:
        """Wait for the start lines and the prompt under them (a new session's lines come once it
        is built, above the first prompt, which is drawn before: ui/repl_start.py)."""
        self.child.expect(r"session \S+ \((new|resumed)")
        self.ready()

    def ready(self) -> None:
        """Wait for the prompt to be drawn and the cursor shown again."""
        self.child.expect("›")
        self.child.expect(r"\x1b\[\?25h")

    def send(self, keys: str) -> None:
        self.child.send(keys)  # Enter is "\r" in a terminal; "\n" (Ctrl-J) inserts a newline

    def expect(self, pattern, timeout: float | None = None) -> None:
        try:
            self.child.expect(pattern, timeout=timeout if timeout is not None else -1)
        except pexpect.TIMEOUT as exc:  # the screen and the child's stacks say more than the last bytes
            raise AssertionError(str(exc)) from None

    def wait_screen(self, text: str | re.Pattern, timeout: float = HANG_GUARD_S) -> None:
        """Until `text` (or a line the pattern matches) is visible on the screen, not only somewhere
        in the byte stream."""
        seen = text.search if isinstance(text, re.Pattern) else lambda line: text in line
        self.wait_until(lambda lines: any(seen(line) for line in lines), timeout, f"{text!r} never showed")

    def wait_until(
        self, holds, timeout: float = HANG_GUARD_S, failed: str = "the screen never came to hold what was waited for"
    ) -> None:
        """Until `holds(lines)` is true of the screen's non-blank lines (read as the child writes). The read
        that made it hold stays for the next `expect`: on a loaded machine it can carry what comes after the
        line waited for (a turn's end with the command's last output line), and an `expect` for that would
        otherwise wait for bytes already read."""
        deadline, last = time.monotonic() + timeout, ""
        while not holds([line for line in self.display() if line.strip()] or [""]):
            if time.monotonic() > deadline:
                raise AssertionError(self.child.hang_report(failed))
            try:
                last = self.child.read_nonblocking(65536, timeout=0.05)
            except pexpect.TIMEOUT:
                last = ""
        self.child.buffer += last

    def prompt_shown(self, timeout: float = HANG_GUARD_S) -> None:
        """Until the screen's last line is the prompt and the cursor is shown: ready() read off the
        screen, for after wait_screen or wait_until (a prompt drawn in a read before the last one is
        not seen by `expect`)."""
        self.wait_until(lambda lines: bool(PROMPT_LINE.match(lines[-1])) and not self.screen.cursor.hidden, timeout)

    def pump(self, seconds: float) -> None:
        """Keep reading (and updating the screen) for `seconds`."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self.child.read_nonblocking(65536, timeout=min(left, 0.05))
            except pexpect.TIMEOUT:
                pass

    def settle(self, quiet: float = 0.3, timeout: float = 10) -> None:
        """Read until the child has been quiet for `quiet` seconds (a live status never is)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.child.read_nonblocking(65536, timeout=quiet)
            except pexpect.TIMEOUT:
                return

    def resize(self, rows: int, cols: int) -> None:
        """The window becomes rows x cols, its text re-wrapped as tmux does: every line (scrollback
        and screen, down to the cursor's) longer than `cols` goes on as many rows as it needs, and
        the cursor stays by its text. Then the child is told (SIGWINCH).

        The child is stopped meanwhile, so every byte it wrote is on the screen before the
        re-wrap: bytes still in flight at a resize are drawn for the old width by any terminal,
        and no program can tell which were (a redraw between the test's last read and the
        resize would leave a line behind that no code of the child's can prevent)."""
        os.kill(self.child.pid, signal.SIGSTOP)
        try:
            _wait_stopped(self.child.pid)
            self._resize(rows, cols)
        finally:
            os.kill(self.child.pid, signal.SIGCONT)

    def _resize(self, rows: int, cols: int) -> None:
        self.pump(0.1)
        x, y = self.screen.cursor.x, self.screen.cursor.y
        lines = [self._line(line) for line in self.screen.history.top]
        lines += [self._line(self.screen.buffer[row]) for row in range(y + 1)]
        wrapped = [[line[i : i + cols] for i in range(0, len(line), cols)] or [""] for line in lines]
        self.rows, self.cols = rows, cols
        self.screen = pyte.HistoryScreen(cols, rows, history=HISTORY_LINES, ratio=0.5)
        stream = pyte.Stream(self.screen)
        stream.feed("\r\n".join(piece for pieces in wrapped for piece in pieces))
        cursor = self.screen.cursor
        cursor.y = max(0, cursor.y - (len(wrapped[-1]) - 1) + x // cols)
        cursor.x = x % cols
        self.child.logfile_read = _Feed(stream)
        self.child.setwinsize(rows, cols)

    def exit(self) -> int:
        self.send("/exit\r")
        self.child.expect(pexpect.EOF)
        self.child.close()
        return self.child.exitstatus

    # -- what is seen ----------------------------------------------------------------------

    def _line(self, chars) -> str:
        return "".join(chars[x].data for x in range(self.cols)).rstrip()

    def display(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def scrollback(self) -> list[str]:
        """Every line scrolled off the top, oldest first, then the screen."""
        return [self._line(line) for line in self.screen.history.top] + self.display()

    def capture(self) -> str:
        """The screen as text, trailing blank lines dropped (for a report)."""
        lines = self.display()
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)

    def colours_on_line(self, text: str) -> set[str]:
        """Foreground colours used on the first screen line holding `text`."""
        for y, line in enumerate(self.display()):
            if text in line:
                row = self.screen.buffer[y]
                return {row[x].fg for x in range(self.cols) if row[x].data.strip()}
        raise AssertionError(f"{text!r} is not on the screen")
