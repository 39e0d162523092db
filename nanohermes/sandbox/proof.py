"""The live proof for `nanohermes doctor`: one real command inside the sandbox tries what the
sandbox must stop, and the file system and a socket say whether it did.

It tries to write a file outside the workspace, to connect to a port this process listens on
(127.0.0.1), to read a canary file in a hidden path (the state directory), to connect to a Unix
socket this process listens on, and, as the control that tells a working sandbox from a broken
one, to write its private temp dir. With `allow_domains`, it also asks the proxy for a host that
is not listed (refused: 403) and for the first listed one (tunnelled: 200, when the host can be
reached from here; a loopback host is tried against a listener of this process).
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
from nanohermes.sandbox.probe import Capabilities, assess, probe

PROOF_TIMEOUT_S = 30.0  # a Python start and three failed attempts take well under a second
CONNECT_TIMEOUT_S = 2.0
# Runs inside the sandbox (python -S -I -c): each attempt prints one line, "NAME done" or
# "NAME failed: why"; the read prints what it read, so the parent can tell a canary from an empty file.
CHILD = """
import os, socket, sys
outside, port, canary, temp, wait, unix, listed, unlisted = sys.argv[1:9]
def attempt(name, act):
    try:
        print(name, "done", act() or "")
    except Exception as exc:
        print(name, "failed:", type(exc).__name__, exc)
def unix_connect():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(float(wait))
    s.connect(unix)
    s.close()
def tunnel(target):
    host, _, port = os.environ["http_proxy"].rpartition(":")
    s = socket.create_connection((host.split("//")[-1], int(port)), 60)
    s.sendall(("CONNECT %s HTTP/1.1\\r\\n\\r\\n" % target).encode())
    status = s.recv(200).split(b" ")[1].decode()
    s.close()
    if status != "200":
        raise OSError("the proxy answered " + status)
attempt("write", lambda: open(outside, "w").write("escaped") and None)
attempt("connect", lambda: socket.create_connection(("127.0.0.1", int(port)), float(wait)).close())
attempt("read", lambda: open(canary).read())
attempt("unix", unix_connect)
if listed != "-":
    attempt("listed", lambda: tunnel(listed))
    attempt("unlisted", lambda: tunnel(unlisted))
attempt("temp", lambda: open(temp, "w").write("ok") and None)
"""
UNLISTED = "nanohermes-proof.invalid:443"  # .invalid is never a real host (RFC 2606)


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
    """The checks, each blocked or allowed as it happened (all 'not run' when the sandbox cannot start)."""
    caps = capabilities or probe()
    backend = assess(policy, caps, prefer).backend
    elsewhere = _outside_dir(policy)  # None: the workspace holds every place to try (a workspace of /)
    sockets_open = bool(policy.allow_unix_sockets) and backend != "bwrap"  # Landlock cannot mask the others
    checks = [
        ("write", "write outside the workspace", "blocked" if elsewhere else NOT_TRIED),
        ("connect", "connect to a local port", "allowed" if policy.network else "blocked"),
        ("read", "read a hidden path", "blocked"),
        ("unix", "connect to a Unix socket", "allowed" if sockets_open else "blocked"),
    ]
    listed = _listed_target(policy) if policy.proxied and backend == "bwrap" else None
    if listed:
        checks += [("listed", f"reach {listed[0]} (listed) through the proxy", "allowed")]
        checks += [("unlisted", "reach a host not listed", "blocked")]
    checks.append(("temp", "write the temp dir", "allowed"))
    with _Bait(policy, elsewhere, listed) as bait:
        argv = [sys.executable, "-S", "-I", "-c", CHILD, *bait.arguments(listed)]
        try:
            said = _run(confine(argv, policy, policy.workspace, capabilities=caps, prefer=prefer), policy)
        except SandboxUnavailable as exc:
            return [ProofCheck(name, want, "not run", str(exc)) for _, name, want in checks]
        happened = bait.happened(said)
    return [
        ProofCheck(name, want, NOT_TRIED, NO_OUTSIDE)
        if want == NOT_TRIED
        else ProofCheck(name, want, "allowed" if happened[key] else "blocked", said.get(key, "no report"))
        for key, name, want in checks
    ]


def _listed_target(policy: Policy) -> tuple[str, int | None] | None:
    """The first listed host that is a name or address (not a wildcard), and the port of a listener
    to open for it when it is this machine's loopback (None: port 443, out on the network)."""
    host = next((h for h in policy.allow_domains if not h.startswith("*.")), None)
    if host is None:
        return None
    loopback = host == "localhost" or host == "::1" or host.startswith("127.")
    return host, 0 if loopback else None


class _Bait:
    """What the child aims at: a place outside, a canary in the hidden state directory, a TCP
    listener, a Unix socket, a listener for a loopback host listed; all gone after."""

    def __init__(self, policy: Policy, elsewhere: Path | None, listed: tuple[str, int | None] | None):
        self.policy = policy
        self.outside = Path(tempfile.mkdtemp(prefix="nanohermes-proof-", dir=elsewhere)).resolve()
        policy.state_dir.mkdir(parents=True, exist_ok=True)
        self.canary, self.token = policy.state_dir / f".sandbox-proof-{os.getpid()}", secrets.token_hex(8)
        self.canary.write_text(self.token)
        self.temp = policy.temp_dir / f"sandbox-proof-{os.getpid()}"
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(str(self.outside / "proof.sock"))
        self.unix.listen(1)
        self.host_listener = None
        if listed is not None and listed[1] == 0:
            self.host_listener = socket.create_server(("localhost" if listed[0] == "localhost" else listed[0], 0))

    def arguments(self, listed) -> list[str]:
        target = "-"
        if listed is not None:
            port = self.host_listener.getsockname()[1] if self.host_listener else 443
            target = f"[{listed[0]}]:{port}" if ":" in listed[0] else f"{listed[0]}:{port}"
        return [str(self.outside / "escaped"), str(self.listener.getsockname()[1]), str(self.canary), str(self.temp),
                str(CONNECT_TIMEOUT_S), str(self.outside / "proof.sock"), target, UNLISTED]  # fmt: skip

    def happened(self, said: dict[str, str]) -> dict[str, bool]:
        done = lambda key: said.get(key, "").startswith(f"{key} done")  # noqa: E731
        return {
            "write": (self.outside / "escaped").exists(),
            "connect": _accepted(self.listener),
            "read": said.get("read", "").split("done ", 1)[-1].strip() == self.token,
            "unix": _accepted(self.unix),
            "listed": done("listed"),
            "unlisted": done("unlisted"),
            "temp": self.temp.exists(),
        }

    def __enter__(self) -> _Bait:
        return self

    def __exit__(self, *exc) -> None:
        for sock in (self.listener, self.unix, self.host_listener):
            if sock is not None:
                sock.close()
        shutil.rmtree(self.outside, ignore_errors=True)
        self.canary.unlink(missing_ok=True)
        self.temp.unlink(missing_ok=True)


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
            pass_fds=launch.pass_fds,
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
