"""What a failed command's output says the sandbox blocked, as one plain note for the model (pure).

A model that sees "Read-only file system" tends to retry with sudo, chmod or another path; told
that the sandbox blocked a write outside the workspace, it can ask instead. Only lines carrying
an error the sandbox causes are read, and a path is blamed on the sandbox only when the policy
says so (inside the workspace, "Permission denied" is someone else's doing).
"""

from __future__ import annotations

import os
import re
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
MAX_FINDINGS = 3  # the first few say enough; a hundred failed writes say the same thing
QUOTED = re.compile(r"""['‘"`]([^'’"`\n]+)['’"`]""")


def blocked_note(exit_code: int, output: str, policy: Policy, cwd: Path | None = None) -> str | None:
    """A note naming what the sandbox blocked, or None when nothing points at it (and for a
    command that succeeded: it needs no advice). Relative paths are taken from `cwd`
    (default: the workspace)."""
    if exit_code == 0 or not policy.confined:
        return None
    base = cwd or policy.workspace
    findings: dict[str, None] = {}
    previous = ""
    for line in output.splitlines():
        finding = _file_finding(line, policy, base) or _network_finding(previous + "\n" + line, policy)
        previous = line  # a traceback names the call (`sock.connect(sa)`) the line before the error
        if finding:
            findings[finding] = None
            if len(findings) >= MAX_FINDINGS:
                break
    if not findings:
        return None
    return "Sandbox: " + "; ".join(findings) + ". " + ASK


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
            where = "its temp dir (level read-only)" if policy.level == "read-only" else "the workspace"
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


def _network_finding(line: str, policy: Policy) -> str | None:
    if policy.network:
        return None
    if any(e in line for e in NETWORK_ERRORS) or ("Permission denied" in line and any(w in line for w in SOCKET_WORDS)):
        return "the network is off in the sandbox (network = false; its localhost is its own)"
    return None
