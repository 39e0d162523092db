"""The REPL telling you, through the terminal, that it waits for you: a turn that took longer than
`notify_after` seconds ended, or an approval question waits after as long without you.

`notify = "bell"` writes BEL (the terminal beeps, or marks its tab or window); `"osc"` a desktop
notification in both of the escape sequences terminals use for it — OSC 9 (iTerm2, WezTerm,
Windows Terminal, Ghostty) and OSC 777 (rxvt-unicode, foot, VTE terminals) — a terminal that knows
neither ignores both; `"off"` (the default) nothing. `sequence` is pure.
"""

from __future__ import annotations

import sys
import time

BEL = "\a"
TITLE = "NanoHermes"
BODY_CHARS = 120  # a desktop notification's line; the terminal shows the rest of the story


def sequence(kind: str, body: str) -> str:
    """What to write for `kind` ("bell", "osc"; "" for "off"): `body` without control characters
    (they would end the sequence early) nor ";" (OSC 777's separator)."""
    if kind == "bell":
        return BEL
    if kind != "osc":
        return ""
    clean = "".join(c if c.isprintable() and c != ";" else " " for c in body)[:BODY_CHARS].strip()
    return f"\x1b]9;{TITLE}: {clean}\a\x1b]777;notify;{TITLE};{clean}\a"


class Notifier:
    """`seen()` when the user acts (sends a message, answers a question); `waiting(why)` when
    NanoHermes waits for them: it notifies once `after` seconds have passed since they last acted."""

    def __init__(self, kind: str, after: float, out=None, clock=time.monotonic):
        self.kind, self.after, self._out, self._clock = kind, after, out, clock
        self._since = clock()

    def seen(self) -> None:
        self._since = self._clock()

    def waiting(self, why: str) -> None:
        text = sequence(self.kind, why)
        if not text or self._clock() - self._since < self.after:
            return
        out = self._out or sys.stdout
        try:
            if out.isatty():
                out.write(text)
                out.flush()
        except (OSError, ValueError):  # the terminal is gone: nobody to tell
            pass
