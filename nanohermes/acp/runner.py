"""Turns run on the main thread, one at a time, so a cancel is a real Ctrl-C.

The loop stops a turn the one way it knows: KeyboardInterrupt, from SIGINT, which Python
delivers to the main thread only and which also breaks a blocking read (a model thinking, a
command running, an approval waiting). So `nanohermes acp` keeps the protocol on a background
thread and runs every turn here; a cancel sends SIGINT to this thread while that turn runs.
The handler raises only for a stop that was asked for and is still wanted: one that lands
after its turn ended is dropped. A SIGINT nobody asked for (Ctrl-C in a terminal) stops the
running turn and ends the process.

Sessions are isolated (each its own runtime, history, approvals and MCP servers); turns of
different sessions wait for each other.
"""

from __future__ import annotations

import concurrent.futures
import queue
import signal
import threading
import time
from collections.abc import Callable

from nanohermes.signals import run_pending

STALE_SIGNAL_S = 2.0  # a SIGINT this soon after one we sent, with no turn running, is that one arriving late


class TurnRunner:
    def __init__(self) -> None:
        self._jobs: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._running: str | None = None  # the session whose job runs now
        self._stop_asked = False  # a cancel for that job was sent as SIGINT
        self._stopping = False  # KeyboardInterrupt was raised in that job: it is ending its turn
        self._sent_at = 0.0
        self.shutting_down = False
        self.stopped_by: int | None = None  # the signal (SIGTERM, SIGHUP) that ended the process

    # -- from any thread ---------------------------------------------------------------------

    def submit(self, key: str, job: Callable[[], object]) -> concurrent.futures.Future:
        """Queue `job` for the main thread; cancelling the future before it starts drops it."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._jobs.put((key, job, future))
        return future

    def interrupt(self, key: str) -> bool:
        """Stop `key`'s running job as Ctrl-C would; False when it is not running."""
        with self._lock:
            if self._running != key or self._stop_asked:
                return False
            self._stop_asked, self._sent_at = True, time.monotonic()
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            return True

    def busy_with_other(self, key: str) -> bool:
        """Whether another session's turn runs now (a new prompt waits for it)."""
        return self._running is not None and self._running != key

    def stop(self) -> None:
        """The client went away: stop the running job (no one is left to answer) and end."""
        self.shutting_down = True
        self._jobs.put(None)
        if self._running is not None:
            self.interrupt(self._running)

    # -- the main thread ---------------------------------------------------------------------

    def serve_forever(self) -> None:
        previous = signal.signal(signal.SIGINT, self._on_sigint)
        try:
            while not self.shutting_down:
                try:
                    item = self._jobs.get()
                except KeyboardInterrupt:  # Ctrl-C while idle: end
                    return
                if item is None:
                    return
                key, job, future = item
                if future.set_running_or_notify_cancel():
                    self._run(key, job, future)
        finally:
            signal.signal(signal.SIGINT, previous)

    def _run(self, key: str, job: Callable[[], object], future: concurrent.futures.Future) -> None:
        with self._lock:
            self._running, self._stop_asked, self._stopping = key, False, False
        try:
            outcome, failed = job(), None
        except KeyboardInterrupt:  # a stop that landed outside the loop's own handlers: nothing to return
            outcome, failed = None, None
        except BaseException as exc:  # delivered to the caller, who words it; never ends the process
            outcome, failed = None, exc
        while True:  # our late SIGINT may land here: the job is over, so it only has to be let through
            try:
                with self._lock:
                    self._running = None
                run_pending()  # a SIGTERM that came with the cancel (signals.py) ends the process now
                break
            except KeyboardInterrupt:
                continue
        if failed is None:
            future.set_result(outcome)
        else:
            future.set_exception(failed)

    def on_terminate(self, signum, frame) -> None:
        """SIGTERM or SIGHUP: stop the running turn (its history stays valid) and end."""
        self.shutting_down, self.stopped_by = True, signum
        self._jobs.put(None)
        self._stop_job()

    def _on_sigint(self, signum, frame) -> None:
        if self._running is not None and self._stop_asked:
            return self._stop_job()  # the cancel we sent: the loop ends the turn as on Ctrl-C
        if self._running is None and time.monotonic() - self._sent_at < STALE_SIGNAL_S:
            return  # ours, arriving after its turn ended: nothing to stop
        self.shutting_down = True  # Ctrl-C from a terminal: stop what runs, then end
        if self._running is None:
            raise KeyboardInterrupt  # idle: end the wait for a job
        self._stop_job()

    def _stop_job(self) -> None:
        """Stop the running job as Ctrl-C does, once. A cancel and a SIGTERM may both be pending
        (the editor closes our stdin as it signals us); a second KeyboardInterrupt would land in
        the loop's clean-up before it is shielded and leave the turn's calls unanswered."""
        if self._running is not None and not self._stopping:
            self._stopping = True
            raise KeyboardInterrupt
