"""Colours readable on the terminal's background.

`theme = "dark"` keeps rich's own colours; `"light"` maps the ones unreadable on a white background
(yellow, cyan, bright colours, faint text, monokai's near-white code) to darker ones; `"auto"` (the
default) picks one: COLORFGBG when the terminal sets it (rxvt, Konsole), else the terminal is asked
for its background colour (OSC 11) with a device-attributes query (DA1) after it — every terminal
answers DA1, so one that ignores OSC 11 costs no wait — within QUERY_TIMEOUT_S, before the first
prompt reads the keyboard. No answer: dark. NO_COLOR wins over all of it: no colours, nothing asked.

The parsing is pure (`background_of_colorfgbg`, `background_of_reply`); `ask_terminal` does the I/O.
"""

from __future__ import annotations

import os
import re
import sys
import time

# A terminal answers in milliseconds, over ssh in a round trip; one that never answers (a pipe, a
# test harness) costs this once, before the first prompt.
QUERY_TIMEOUT_S = 0.25
QUERY = b"\x1b]11;?\x1b\\\x1b[c"  # the background colour, then device attributes (DA1)
_RGB = re.compile(rb"\x1b\]11;rgb:([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})")
_DA1_END = re.compile(rb"\x1b\[\?[0-9;]*c")
LIGHT_LUMINANCE = 0.5  # relative luminance above which a background is light (white is 1, black 0)
# COLORFGBG's background numbers that are light: white (7) and the bright colours but bright black (8).
LIGHT_COLORFGBG = frozenset({7, 9, 10, 11, 12, 13, 14, 15})

# The light theme: each style the UI names, darker (xterm-256 colours, so 256-colour terminals show them exactly).
LIGHT_STYLES = {
    "yellow": "#875f00",
    "bold yellow": "bold #875f00",
    "bright_yellow": "#875f00",
    "green": "#005f00",
    "cyan": "#005f87",
    "bright_cyan": "#005f87",
    "blue": "#0000af",
    "bright_blue": "#005faf",
    "magenta": "#870087",
    "bright_magenta": "#870087",
    "bright_black": "#585858",
    "dim": "#6c6c6c",
    "markdown.code": "bold #005f87",
    "markdown.block_quote": "#870087",
    "markdown.link": "#005faf",
    "markdown.link_url": "underline #005faf",
    "markdown.h1": "bold",
    "markdown.h2": "bold underline",
}
CODE_THEMES = {"dark": "monokai", "light": "friendly"}  # pygments styles for code blocks


def background_of_colorfgbg(value: str | None) -> str | None:
    """ "light" or "dark" from COLORFGBG ("15;0", "0;default;15": the last field is the background)."""
    field = (value or "").split(";")[-1].strip()
    if not field.isdigit():
        return None
    return "light" if int(field) in LIGHT_COLORFGBG else "dark"


def background_of_reply(reply: bytes) -> str | None:
    """ "light" or "dark" from a terminal's answer to OSC 11 (`ESC ] 11 ; rgb:ffff/ffff/ffff ST`)."""
    match = _RGB.search(reply)
    if match is None:
        return None
    red, green, blue = (int(part, 16) / (16 ** len(part) - 1) for part in match.groups())
    luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    return "light" if luminance > LIGHT_LUMINANCE else "dark"


def ask_terminal(timeout: float = QUERY_TIMEOUT_S) -> bytes:
    """The terminal's answer to QUERY, read without echo until DA1's answer or `timeout`; b"" when
    stdin and stdout are not both a terminal."""
    try:
        fd_in, fd_out = sys.stdin.fileno(), sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):
        return b""
    if not (os.isatty(fd_in) and os.isatty(fd_out)):
        return b""
    import select
    import termios

    saved = termios.tcgetattr(fd_in)
    quiet = list(saved)
    quiet[3] &= ~(termios.ECHO | termios.ICANON)  # no echo, no line buffering: the answer is read as it comes
    reply = b""
    try:
        termios.tcsetattr(fd_in, termios.TCSANOW, quiet)
        os.write(fd_out, QUERY)
        deadline = time.monotonic() + timeout
        while not _DA1_END.search(reply) and (left := deadline - time.monotonic()) > 0:
            if not select.select([fd_in], [], [], left)[0]:
                break
            reply += os.read(fd_in, 1024)
    except OSError:
        pass
    finally:
        termios.tcsetattr(fd_in, termios.TCSANOW, saved)
    return reply


def chosen(setting: str, environ=os.environ, ask=ask_terminal) -> str:
    """The theme to draw with: "dark" or "light" ("auto" asks as the module says)."""
    if setting in ("dark", "light"):
        return setting
    if environ.get("NO_COLOR"):
        return "dark"  # no colours at all: nothing to ask
    said = background_of_colorfgbg(environ.get("COLORFGBG"))
    return said or background_of_reply(ask()) or "dark"


def rich_theme(name: str):
    """The rich Theme for `name` (None: rich's own colours)."""
    if name != "light":
        return None
    from rich.theme import Theme

    return Theme(LIGHT_STYLES)
