"""SIGTERM and SIGHUP (a closed terminal, `kill`, a service manager) stop a run the way Ctrl-C
does: the loop answers every open tool call, the session is saved, commands' process groups
are ended; then the process exits 128 + the signal's number (143, 129).

Terminated (errors.py) is a SystemExit, not a KeyboardInterrupt: code that treats Ctrl-C as
"stop this turn, keep going" (the REPL's prompt, an approval question) must not swallow a
request to exit, and asyncio, under the REPL's prompt, lets a SystemExit through. Clean-up
that must not be torn runs inside `deferred()`: a second Ctrl-C pressed while it runs is
absorbed, a termination signal is held and delivered once it is done. Starting a child process
runs inside `held()`: a signal that lands while `Popen` runs would leave the child unowned.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

from nanohermes.errors import Terminated

__all__ = ["TERMINATING", "Terminated", "block_all", "deferred", "held", "install", "run_pending"]

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
def held(absorb_interrupt: bool = False):
    """Keep SIGINT, SIGTERM and SIGHUP from landing inside the block: one that arrives meanwhile
    is delivered to its own handler once the block is done (so a front end's handler, such as
    ACP's, still decides what it means). With `absorb_interrupt`, a held SIGINT is dropped."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers run in the main thread only: nothing can land here
        return
    held_signals: list[int] = []
    swapped: dict[int, object] = {}  # filled as it goes: a signal landing mid-way leaves nothing swapped
    try:
        for signum in (signal.SIGINT, *TERMINATING):
            handler = signal.getsignal(signum)
            if handler not in (signal.SIG_IGN, None):
                signal.signal(signum, lambda n, frame: held_signals.append(n))
                swapped[signum] = handler
        yield
    finally:
        for signum, handler in swapped.items():
            signal.signal(signum, handler)
    due = [n for n in held_signals if n in TERMINATING] or ([] if absorb_interrupt else held_signals)
    if due:
        signal.raise_signal(due[0])  # its handler runs now, in this thread


def deferred():
    """Run a clean-up without being torn by a signal: SIGINT meanwhile is absorbed (the run is
    already stopping), SIGTERM/SIGHUP are held and delivered at the end."""
    return held(absorb_interrupt=True)


def run_pending() -> None:
    """Run the handlers of signals that arrived but were not handled yet. When two arrive at
    once and the first handler raises, CPython runs the second at its next check for signals,
    and another thread can clear that check: a SIGTERM behind a Ctrl-C then waits for the next
    signal. Setting a handler makes the check."""
    if threading.current_thread() is threading.main_thread():
        handler = signal.getsignal(signal.SIGINT)
        if handler is not None:
            signal.signal(signal.SIGINT, handler)


def block_all() -> None:
    """On the way out: no signal may turn the chosen exit code into a death by signal (Python
    re-raises an uncaught SIGINT at shutdown, which a shell sees as -2, not 130)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, *TERMINATING})
