"""Jobs run side by side on a few threads, their results taken back in order on the calling
thread — which also runs, meanwhile, what a job hands it (`on_caller`: an approval question, a
progress line to a renderer), so questions and events stay on the one thread that had them
before. Ctrl-C and SIGTERM land in the calling thread while it waits (a lock's wait is
interruptible); `cancel()` then starts no further job and lets a job waiting for the caller go.

The threads are daemons: a job still running when the user leaves (a grep of a huge tree)
must not hold the exit. Its result is dropped."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from nanohermes.errors import ToolError

CANCEL_POLL_S = 0.1  # how soon a job waiting for the caller notices the caller stopped waiting
STOPPED = "stopped: the run was interrupted before this could be asked"


class Together:
    def __init__(self, limit: int):
        self._caller = threading.current_thread()
        self._limit = limit
        self._todo: queue.SimpleQueue = queue.SimpleQueue()
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()  # ("done", index, outcome) | ("call", fn, reply)
        self._done: dict[int, tuple[bool, Any]] = {}
        self._cancelled = threading.Event()

    def _work(self) -> None:
        while not self._cancelled.is_set():
            try:
                index, job = self._todo.get_nowait()
            except queue.Empty:
                return
            try:
                outcome = (True, job())
            except BaseException as exc:  # the caller raises it, in order
                outcome = (False, exc)
            self._inbox.put(("done", index, outcome))

    def results(self, jobs: list[Callable[[], Any]]) -> Iterator[Any]:
        """Run the jobs, at most `limit` at a time; yield each one's value in the jobs' order, as
        soon as it and those before it are done; a job's exception is raised in its place."""
        for index, job in enumerate(jobs):
            self._todo.put((index, job))
        for _ in range(max(1, min(self._limit, len(jobs)))):
            threading.Thread(target=self._work, name="nanohermes-read", daemon=True).start()
        for index in range(len(jobs)):
            while index not in self._done:
                kind, first, second = self._inbox.get()
                if kind == "done":
                    self._done[first] = second
                else:
                    self._answer(first, second)
            ok, value = self._done.pop(index)
            if not ok:
                raise value
            yield value

    def _answer(self, fn: Callable[[], Any], reply: queue.SimpleQueue) -> None:
        try:
            reply.put((True, fn()))
        except BaseException as exc:  # Ctrl-C during a question: the job hears it, the caller stops
            reply.put((False, exc))
            raise

    def on_caller(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` on the calling thread (from a job: wait for it there) and return its value."""
        if threading.current_thread() is self._caller:
            return fn()
        reply: queue.SimpleQueue = queue.SimpleQueue()
        self._inbox.put(("call", fn, reply))
        while True:
            try:
                ok, value = reply.get(timeout=CANCEL_POLL_S)
            except queue.Empty:
                if self._cancelled.is_set():
                    raise ToolError(STOPPED) from None
                continue
            if ok:
                return value
            raise ToolError(STOPPED) from value

    def cancel(self) -> None:
        """Start no further job; a job waiting for the caller gets a ToolError (its result is dropped)."""
        self._cancelled.set()
