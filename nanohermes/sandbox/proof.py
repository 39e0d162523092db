"""The live proof for `nanohermes doctor`: one real command inside the sandbox tries what the
sandbox must stop, and the file system and a socket say whether it did.

It tries to write a file outside the workspace, to connect to a port this process listens on
(127.0.0.1), to read a canary file in a hidden path (the state directory's sessions/), and, as
the control that tells a working sandbox from a broken one, to write its private temp dir.
"""

from __future__ import annotations

import os
import secrets
import select
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nanohermes.errors import SandboxUnavailable
from nanohermes.sandbox.launch import confine
from nanohermes.sandbox.policy import Policy
from nanohermes.sandbox.probe import Capabilities

PROOF_TIMEOUT_S = 30.0  # a Python start and three failed attempts take well under a second
CONNECT_TIMEOUT_S = 2.0
# Runs inside the sandbox (python -S -I -c): each attempt prints one line, "NAME done" or
# "NAME failed: why"; the read prints what it read, so the parent can tell a canary from an empty file.
CHILD = """
import socket, sys
outside, port, canary, temp, wait = sys.argv[1:6]
def attempt(name, act):
    try:
        print(name, "done", act() or "")
    except Exception as exc:
        print(name, "failed:", type(exc).__name__, exc)
attempt("write", lambda: open(outside, "w").write("escaped") and None)
attempt("connect", lambda: socket.create_connection(("127.0.0.1", int(port)), float(wait)).close())
attempt("read", lambda: open(canary).read())
attempt("temp", lambda: open(temp, "w").write("ok") and None)
"""


NOT_TRIED = "not tried"
NO_OUTSIDE = "every place to try a write is inside the workspace (is the workspace / ?)"


@dataclass(frozen=True)
class ProofCheck:
    name: str
    expected: str  # "blocked" or "allowed"
    outcome: str  # "blocked", "allowed" or "not run"
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome == self.expected


def prove(policy: Policy, capabilities: Capabilities | None = None, prefer: str | None = None) -> list[ProofCheck]:
    """Four checks, each blocked or allowed as it happened (all 'not run' when the sandbox cannot start)."""
    names = ("write outside the workspace", "connect to a local port", "read a hidden path", "write the temp dir")
    elsewhere = _outside_dir(policy)  # None: the workspace holds every place to try (a workspace of /)
    expected = ("blocked" if elsewhere else NOT_TRIED, "allowed" if policy.network else "blocked", "blocked", "allowed")
    outside = Path(tempfile.mkdtemp(prefix="nanohermes-proof-", dir=elsewhere)).resolve()
    canary_dir = policy.state_dir / "sessions"
    canary_dir.mkdir(parents=True, exist_ok=True)
    canary, token = canary_dir / f".sandbox-proof-{os.getpid()}", secrets.token_hex(8)
    canary.write_text(token)
    temp = policy.temp_dir / f"sandbox-proof-{os.getpid()}"
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        argv = [sys.executable, "-S", "-I", "-c", CHILD, str(outside / "escaped"), str(listener.getsockname()[1])]
        argv += [str(canary), str(temp), str(CONNECT_TIMEOUT_S)]
        try:
            said = _run(confine(argv, policy, policy.workspace, capabilities=capabilities, prefer=prefer), policy)
        except SandboxUnavailable as exc:
            return [ProofCheck(name, want, "not run", str(exc)) for name, want in zip(names, expected)]
        happened = (
            (outside / "escaped").exists(),
            _accepted(listener),
            said.get("read", "").split("done ", 1)[-1].strip() == token,
            temp.exists(),
        )
    finally:
        listener.close()
        shutil.rmtree(outside, ignore_errors=True)
        canary.unlink(missing_ok=True)
        temp.unlink(missing_ok=True)
    outcomes = [
        NOT_TRIED if want == NOT_TRIED else "allowed" if did else "blocked" for want, did in zip(expected, happened)
    ]
    return [
        ProofCheck(name, want, outcome, said.get(key, "no report") if outcome != NOT_TRIED else NO_OUTSIDE)
        for name, want, outcome, key in zip(names, expected, outcomes, ("write", "connect", "read", "temp"))
    ]


def _outside_dir(policy: Policy) -> Path | None:
    """Where to try a write outside the workspace: the system's temp dir, unless the workspace
    holds it (a workspace of /tmp), then the user's home or the state directory's parent."""
    for where in (Path(tempfile.gettempdir()), policy.user_home, policy.state_dir.parent):
        where = where.resolve()
        if not policy.is_writable(where / "x") and not _inside(where, policy.workspace) and os.access(where, os.W_OK):
            return where
    return None


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _run(launch, policy: Policy) -> dict[str, str]:
    """The child's report, one line per attempt, keyed by the attempt's name."""
    try:
        done = subprocess.run(
            launch.argv,
            cwd=policy.workspace,
            env=launch.environ(os.environ),
            capture_output=True,
            timeout=PROOF_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    finally:
        launch.release()
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    report = {line.split(" ", 1)[0]: line for line in lines if " " in line}
    if not report:  # the sandbox itself failed: say how
        report = dict.fromkeys(("write", "connect", "read", "temp"), done.stderr.decode("utf-8", "replace").strip())
    return report


def _accepted(listener: socket.socket) -> bool:
    """Whether a connection reached the listener (it waits in the backlog even unaccepted)."""
    readable, _, _ = select.select([listener], [], [], 0)
    if readable:
        listener.accept()[0].close()
    return bool(readable)
