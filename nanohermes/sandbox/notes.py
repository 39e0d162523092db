"""What a command's output says the sandbox blocked: plain words for the model and the user (pure).

A model that sees "Read-only file system" tends to retry with sudo, chmod or another path; told
that the sandbox blocked a write outside the workspace, it can ask instead. The user sees the same
words on the command's tool line. Only lines carrying an error the sandbox causes are read, and a
path is blamed on the sandbox only when the policy says so (inside the workspace, "Permission
denied" is someone else's doing). A command that exits 0 is read too: `curl … | head` exits 0
when curl could not resolve the host, and what was blocked still matters. The hosts the proxy
refused (sandbox/proxy.py) are named whatever the output says.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nanohermes.sandbox.policy import Policy

ASK = (
    "If it really must, ask the user to run it unsandboxed (run_command's `unsandboxed: true`, "
    "with the reason); do not retry it another way."
)
FILE_ERRORS = (
    "Read-only file system",  # bubblewrap's read-only mounts
    "Permission denied",  # Landlock
    "Operation not permitted",  # Seatbelt
    "No such file or directory",  # a hidden directory is empty
    "File exists",  # a protected path that did not exist is held by a placeholder
)
NETWORK_ERRORS = (
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Could not resolve host",
    "Name or service not known",
    "No address associated with hostname",
    "nodename nor servname provided",
    "getaddrinfo failed",
    "Connection refused",  # the sandbox's loopback is its own: nothing listens there
)
# "Permission denied" without a path, next to one of these, is Landlock refusing a TCP connect.
SOCKET_WORDS = ("connect", "Connection", "socket", "port ", "URLError", "HTTPConnection")
SOCKET_ERROR = "operation not permitted"  # the Unix-socket filter's EPERM, as C and Python spell it (any case)
UNIX_WORDS = ("socket", "af_unix", ".sock", "unix:", "unix ")
MAX_FINDINGS = 3  # the first few say enough; a hundred failed writes say the same thing
QUOTED = re.compile(r"""['‘"`]([^'’"`\n]+)['’"`]""")


@dataclass(frozen=True)
class Blocked:
    """What the sandbox blocked, each finding in plain words."""

    findings: tuple[str, ...]
    exit_code: int

    @property
    def note(self) -> str:
        """For the model, after the command's output."""
        head = "Sandbox: " if self.exit_code != 0 else "Sandbox (the command exited 0, but this was blocked): "
        return head + "; ".join(self.findings) + ". " + ASK

    @property
    def shown(self) -> str:
        """For the user's tool line."""
        return "; ".join(self.findings)


def blocked_note(exit_code: int, output: str, policy: Policy, cwd: Path | None = None) -> str | None:
    """The model's note (see `blocked`), or None."""
    found = blocked(exit_code, output, policy, cwd)
    return found.note if found else None


def blocked(
    exit_code: int, output: str, policy: Policy, cwd: Path | None = None, refused_hosts: Sequence[str] = ()
) -> Blocked | None:
    """What the sandbox blocked, or None when nothing points at it (and for a command that ran
    unconfined). Relative paths are taken from `cwd` (default: the workspace); `refused_hosts`:
    the hosts the command's proxy refused."""
    if not policy.confined:
        return None
    base = cwd or policy.workspace
    findings: dict[str, None] = {f"{host} is not among the hosts commands may reach (allow_domains)": None
                                 for host in refused_hosts[:MAX_FINDINGS]}  # fmt: skip
    previous = ""
    for line in output.splitlines():
        if len(findings) >= MAX_FINDINGS:
            break
        context = previous + "\n" + line  # a traceback names the call (`sock.connect(sa)`) the line before the error
        finding = _file_finding(line, policy, base) or _socket_finding(context, policy)
        finding = finding or _network_finding(context, policy)
        previous = line
        if finding:
            findings[finding] = None
    return Blocked(tuple(findings), exit_code) if findings else None


def _file_finding(line: str, policy: Policy, base: Path) -> str | None:
    error = next((e for e in FILE_ERRORS if e in line), None)
    if error is None:
        return None
    for path in _paths(line, error, base, policy.user_home):
        if policy.is_hidden(path):
            return f"{policy.shown(_rule(policy.hidden, path))} is hidden from commands: {path}"
        if error == "No such file or directory":  # only a hidden path's absence is the sandbox's doing
            continue
        if policy.is_protected(path):  # "File exists": the placeholder that keeps it from being made
            return f"{policy.shown(_rule(policy.read_only, path))} is read-only in the sandbox: {path}"
        if not policy.is_writable(path) and error != "File exists":
            where = (
                "its temp dir (read-only: plan mode, or level read-only)"
                if policy.level == "read-only"
                else "the workspace"
            )
            return f"a write outside {where} was blocked: {path}"
    return None


def _rule(roots: tuple[Path, ...], path: Path) -> Path:
    """The most specific of `roots` that holds `path`."""
    return max((root for root in roots if root == path or root in path.parents), key=lambda root: len(root.parts))


def _paths(line: str, error: str, base: Path, home: Path) -> list[Path]:
    """The paths the line names: quoted ones (coreutils, Python), else the field before
    `: <error>` (bash, cat); relative ones from `base`, `~/…` from the user's home."""
    found = [q for q in QUOTED.findall(line) if q.strip() and not any(c.isspace() for c in q)]
    if not found:
        before = line.split(f": {error}", 1)[0].rsplit(": ", 1)[-1].strip()
        found = [before] if before and not any(c.isspace() for c in before) else []
    paths = []
    for text in found:
        path = home / text[2:] if text.startswith("~/") else base / text  # base / an absolute path is that path
        paths.append(Path(os.path.normpath(path)))
    return paths


def _socket_finding(context: str, policy: Policy) -> str | None:
    lowered = context.lower()
    if policy.allow_unix_sockets or SOCKET_ERROR not in lowered or not any(w in lowered for w in UNIX_WORDS):
        return None
    return "Unix sockets are blocked in the sandbox (allow_unix_sockets lists those a command may use)"


def _network_finding(line: str, policy: Policy) -> str | None:
    if policy.network:
        return None
    if any(e in line for e in NETWORK_ERRORS) or ("Permission denied" in line and any(w in line for w in SOCKET_WORDS)):
        if policy.allow_domains:
            hosts = ", ".join(policy.allow_domains)
            return f"the network is off in the sandbox but for {hosts}, reached through the proxy in http_proxy"
        return "the network is off in the sandbox (network = false; its localhost is its own)"
    return None
