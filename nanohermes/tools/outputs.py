"""The full output of every tool call, by call id: what `recall` returns once the model saw
less (a clamp, a placeholder, a trim), and the facts that describe each result."""

from __future__ import annotations

import threading

from nanohermes.calls import NO_FACTS, ResultFacts


class OutputStore:
    """Full outputs and facts, as the transcript recorded them (loop/transcript.py: the one writer,
    which also keeps them in the session); the tools (`recall`), compaction's placeholders and /show
    read them. An output may also be anything with a `read()` that returns it (storage/replay.py:
    StoredOutput, a resumed session's). Locked: `recall` may read it on another thread while the
    loop adds an earlier call's output."""

    def __init__(self, outputs: dict | None = None, facts: dict[str, ResultFacts] | None = None):
        self._outputs = outputs if outputs is not None else {}
        self._facts = facts if facts is not None else {}
        self._lock = threading.Lock()

    def add(self, call_id: str, full: str, facts: ResultFacts = NO_FACTS) -> None:
        with self._lock:
            self._outputs[call_id] = full
            if facts != NO_FACTS:
                self._facts[call_id] = facts

    def get(self, call_id: str) -> str | None:
        """The full output; one a resumed session left in its file is read from there now."""
        with self._lock:
            value = self._outputs.get(call_id)
        return value if value is None or isinstance(value, str) else value.read()

    def facts(self) -> dict[str, ResultFacts]:
        """Facts by call id (calls without any are absent)."""
        return self._facts

    def recent_ids(self, n: int) -> list[str]:
        with self._lock:
            return list(self._outputs)[-n:]
