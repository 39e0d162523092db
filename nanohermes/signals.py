"""SIGTERM and SIGHUP (a closed terminal, `kill`, a service manager) stop a run the way Ctrl-C
does: the loop answers every open tool call, the session is saved, commands' process groups
are ended; then the process exits 128 + the signal's number (143, 129).

Terminated (errors.py) is a SystemExit, not a KeyboardInterrupt: code that treats Ctrl-C as
"stop this turn, keep going" (the REPL's prompt, an approval question) must not swallow a
request to exit, and asyncio, under the REPL's prompt, lets a SystemExit through. Clean-up
that must not be torn runs inside `deferred()`: a second Ctrl-C pressed while it runs is
absorbed, a termination signal is held and raised once it is done.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

from nanohermes.errors import Terminated

__all__ = ["TERMINATING", "Terminated", "block_all", "deferred", "install"]

# The signals that mean "stop now and leave"; SIGINT (Ctrl-C) is Python's KeyboardInterrupt.
TERMINATING = (signal.SIGTERM, signal.SIGHUP)


def _raise_terminated(signum, frame):
    raise Terminated(signum)


def install() -> None:
    """Turn SIGTERM and SIGHUP into Terminated in the main thread (a no-op elsewhere)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in TERMINATING:
        if signal.getsignal(signum) != signal.SIG_IGN:  # `nohup` asked us to ignore SIGHUP: keep ignoring it
            signal.signal(signum, _raise_terminated)


@contextmanager
def deferred():
    """Run a clean-up without being torn by a signal: SIGINT meanwhile is absorbed (the run is
    already stopping), SIGTERM/SIGHUP are held and raised as Terminated at the end."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    watched = (signal.SIGINT, *TERMINATING)
    previous = {signum: signal.getsignal(signum) for signum in watched}
    for signum in watched:
        if previous[signum] != signal.SIG_IGN:
            signal.signal(signum, lambda n, frame: held.append(n))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    stop = next((n for n in held if n in TERMINATING), None)
    if stop is not None:
        raise Terminated(stop)


def block_all() -> None:
    """On the way out: no signal may turn the chosen exit code into a death by signal (Python
    re-raises an uncaught SIGINT at shutdown, which a shell sees as -2, not 130)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, *TERMINATING})
