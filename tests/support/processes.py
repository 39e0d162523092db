"""Whether a process the test started (or one its children started) is still running; whether SIGHUP
can be tested here."""

from __future__ import annotations

import signal

import pytest


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for a reaper (a container's pid 1 may never reap)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


# Under `nohup` the suite and every process it starts ignore SIGHUP, and nanohermes keeps ignoring it
# (signals.install: nohup asked for that): a test of what SIGHUP does has nothing to test there.
SIGHUP_IGNORED = signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
NEEDS_SIGHUP = pytest.mark.skipif(SIGHUP_IGNORED, reason="run under nohup: SIGHUP is ignored, as nohup asks")
