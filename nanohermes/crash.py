"""The last line of defence: an exception nobody expected becomes one paragraph on stderr that
names the log file holding its traceback. No traceback ever reaches the user's terminal.

The log goes to $NANOHERMES_HOME/logs/ (mode 0600); when the state directory itself is the
problem (read-only, missing), to the system's temporary directory instead.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

LOG_DIR = "logs"
SUMMARY_CHARS = 200  # the exception's own words in the paragraph; the log has all of them


def write_crash_log(exc: BaseException, home: Path | None = None) -> Path | None:
    """Write the traceback (and what ran) to a new log file; its path, or None if no directory
    would take it."""
    from nanohermes import __version__

    stamp = time.strftime("%Y%m%d-%H%M%S")
    text = "".join(
        [
            f"nanohermes {__version__} crashed at {time.strftime('%Y-%m-%d %H:%M:%S')}\n",
            f"python {sys.version.split()[0]} · argv {_argv()}\n\n",
            *traceback.format_exception(exc),
        ]
    )
    for folder in _log_dirs(home):
        path = folder / f"crash-{stamp}-{os.getpid()}.log"
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
                f.write(_redactor(home).text(text))
            return path
        except OSError:
            continue
    return None


def crash_message(exc: BaseException, log: Path | None) -> str:
    """The one paragraph the user sees."""
    words = _redactor().text(" ".join(str(exc).split()))  # an error may quote a key
    if len(words) > SUMMARY_CHARS:
        words = words[: SUMMARY_CHARS - 1] + "…"
    what = f"{type(exc).__name__}: {words}" if words else type(exc).__name__
    where = (
        f"the traceback is in {log}"
        if log
        else "no log file could be written (the state and temporary directories refused it)"
    )
    return (
        f"unexpected error ({what}). This is a bug in NanoHermes; {where} — please include it when you report "
        "the bug. Sessions are saved as they go, so the work so far can be resumed with --session NAME."
    )


def report_crash(exc: BaseException) -> str:
    """Log `exc` and return the paragraph to print."""
    return crash_message(exc, write_crash_log(exc))


def _log_dirs(home: Path | None) -> list[Path]:
    if home is None:
        from nanohermes.config import home_dir

        home = home_dir()
    return [home / LOG_DIR, Path(tempfile.gettempdir()) / f"nanohermes-{os.getuid()}-logs"]


def _argv() -> str:
    return " ".join(sys.argv[1:])[:500]


CONFIG_READ_LIMIT = 1 << 20  # config.toml is a few hundred bytes; never read a huge or endless one


def redacted(text: str) -> str:
    """`text` without the environment's and config.toml's secrets: for a line that reaches the
    screen or a script's JSON whatever produced it (cli_base.error, a failure's JSON), the same
    redaction the crash log gets."""
    return _redactor().text(text)


def _redactor(home: Path | None = None):
    """A traceback's messages (and the task in argv) may quote a key; none goes to disk or the
    screen. The environment's secrets and config.toml's, read here: the crash may have come
    before (or from) building the configuration, so none of its checks are relied on."""
    from nanohermes.bounded import parse_toml
    from nanohermes.fileio import read_regular
    from nanohermes.redact import Redactor, secrets_in_table

    if home is None:
        from nanohermes.config import home_dir

        home = home_dir()
    try:
        table = parse_toml(read_regular(home / "config.toml", CONFIG_READ_LIMIT).decode("utf-8"))
    except (OSError, ValueError):  # missing, unreadable, not UTF-8 or not TOML: nothing to learn from it
        table = {}
    return Redactor.for_config().plus(secrets_in_table(table))
