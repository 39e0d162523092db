"""What this machine can enforce (probed once per process), and what a policy gets here, in words.

`probe()` runs bubblewrap once with the flags a command gets (~8 ms) and asks the kernel for
its Landlock ABI (one syscall); `assess()` is pure: given a policy and those capabilities, the
backend that will confine commands and a sentence saying what is and is not enforced. When
the level cannot be enforced, `enforced` is False and the sentence says what to do.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from nanohermes.sandbox.policy import Policy

PROBE_TIMEOUT_S = 5.0  # bwrap starts in milliseconds; a hung one is as good as absent
SEATBELT = "/usr/bin/sandbox-exec"  # never from PATH: a planted sandbox-exec would confine nothing
BACKENDS = ("bwrap", "landlock", "seatbelt")
LANDLOCK_NET_ABI = 4  # the first ABI with TCP rules
INSTALL_HINT = "install bubblewrap (e.g. `apt install bubblewrap`)"
OFF_HINT = 'or set level = "off" under [sandbox] in config.toml (or --sandbox off) to run them unconfined knowingly'


@dataclass(frozen=True)
class Capabilities:
    """What can confine a command here; each `*_problem` says why a backend cannot ('' if it can)."""

    platform: str
    bwrap: str | None = None  # the path of a bwrap that ran a command with every flag we use
    bwrap_problem: str = ""
    landlock_abi: int = 0
    launcher_python: str | None = None  # runs the launchers (Landlock's, and inside.py under bubblewrap)
    sandbox_exec: str | None = None
    seccomp_problem: str = ""  # why the Unix-socket filter cannot be loaded here ('' if it can)


@dataclass(frozen=True)
class Enforcement:
    backend: str  # one of BACKENDS, "off", or "" when nothing can enforce the level
    enforced: bool  # False: commands must not run (unless the level is off)
    summary: str


_probing = threading.Lock()  # one bwrap test run per process, whichever thread asks first


def probe() -> Capabilities:
    """This process's answer, computed on first use (a command's start must not pay it twice)."""
    with _probing:
        return _probe()


def probe_soon() -> None:
    """Start probing now, in the background: bwrap's test run (a process) overlaps the imports
    a front end does before it builds the runtime, which asks probe() for the answer."""
    threading.Thread(target=probe, name="sandbox-probe", daemon=True).start()


@functools.cache
def _probe() -> Capabilities:
    if sys.platform == "darwin":
        return Capabilities("darwin", sandbox_exec=SEATBELT if Path(SEATBELT).exists() else None)
    if not sys.platform.startswith("linux"):
        return Capabilities(sys.platform)
    from nanohermes.sandbox.landlock import abi_version

    path, problem = _try_bwrap()
    return Capabilities("linux", path, problem, abi_version(), sys.executable or None, seccomp_problem=_try_seccomp())


def _try_seccomp() -> str:
    """Whether libseccomp can be loaded (the filter itself is compiled by each launcher)."""
    from nanohermes.sandbox.seccomp import LIBRARY, library

    try:
        library()
    except (OSError, AttributeError) as exc:
        return f"{LIBRARY} cannot be loaded ({exc}); install libseccomp2"
    return ""


def _try_bwrap() -> tuple[str | None, str]:
    path = shutil.which("bwrap")
    if path is None:
        return None, "bwrap is not installed"
    from nanohermes.sandbox.bwrap import BASE_FLAGS

    argv = [path, *BASE_FLAGS, "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"bwrap did not run ({exc})"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"bwrap fails here: {said[-1] if said else f'exit code {done.returncode}'}"
    return path, ""


def assess(policy: Policy, caps: Capabilities, prefer: str | None = None) -> Enforcement:
    """The backend for `policy` on a machine with `caps` (`prefer` forces one, for tests and
    doctor), and what it enforces, in words."""
    if not policy.confined:
        return Enforcement("off", False, 'sandbox off (level = "off"): commands run unconfined, with all your rights')
    problems = {name: _problem(name, policy, caps) for name in BACKENDS if prefer in (None, name)}
    for name, problem in problems.items():
        if not problem:
            return Enforcement(name, True, _words(name, policy, caps))
    reasons = "; ".join(problem for problem in problems.values() if problem != "-") or f"nothing for {caps.platform}"
    return Enforcement(
        "",
        False,
        f"NOT ENFORCED: no sandbox can confine commands here ({reasons}), so commands will not run. "
        f"To enforce it, {INSTALL_HINT}; {OFF_HINT}.",
    )


def _problem(name: str, policy: Policy, caps: Capabilities) -> str:
    """Why `name` cannot enforce `policy` here ('' if it can; '-' for another platform's)."""
    if name == "bwrap":
        return caps.bwrap_problem or ("-" if not caps.bwrap else _filter_problem(policy, caps))
    if name == "seatbelt":
        if caps.platform != "darwin":
            return "-"
        return "" if caps.sandbox_exec else f"{SEATBELT} is missing"
    if caps.platform != "linux":
        return "-"
    if caps.landlock_abi < 1:
        return "this kernel has no Landlock (Linux 5.13+ with landlock in the lsm= list)"
    if not caps.launcher_python:
        return "no Python interpreter to run the Landlock launcher"
    if not policy.network and caps.landlock_abi < LANDLOCK_NET_ABI:
        abi = caps.landlock_abi
        return f"Landlock ABI {abi} cannot block the network (ABI 4, Linux 6.7, can); set network = true to use it"
    return _hidden_in_writable(policy) or _filter_problem(policy, caps)


def _filter_problem(policy: Policy, caps: Capabilities) -> str:
    """The Unix-socket filter is wanted (no allow_unix_sockets) and cannot be loaded."""
    if policy.allow_unix_sockets or not caps.seccomp_problem:
        return ""
    return f"the Unix-socket filter cannot be loaded: {caps.seccomp_problem}"


def _hidden_in_writable(policy: Policy) -> str:
    """Landlock can only grant: a hidden path under a writable root (the workspace is $HOME, or
    holds the state directory) would be readable and writable, and a read-only one (.git) writable:
    a command could plant a hook the user's next git command runs. Said, so commands are refused
    (unless the user accepts the read-only gaps: landlock_gaps = "accept"; never the hidden ones)."""
    protected = [p for p in policy.read_only if any(p == w or w in p.parents for w in policy.writable)]
    if protected and policy.landlock_gaps != "accept":
        names = ", ".join(policy.shown(p) for p in protected)
        return (
            f"Landlock cannot keep {names} read-only inside the writable workspace (it can only grant): a "
            "command could plant a git hook that your next git command runs. Install bubblewrap, or set "
            '[sandbox] level = "read-only" (commands write only their temp dir), or landlock_gaps = "accept" '
            "to run commands with those left writable"
        )
    for hidden in policy.hidden:
        root = next((w for w in policy.writable if hidden == w or w in hidden.parents), None)
        if root is not None:
            return (
                f"Landlock cannot hide {_tilde(policy, hidden)} inside the writable {_tilde(policy, root)}"
                " (it can only grant; e.g. the workspace is your home directory or holds NanoHermes's state "
                "directory); start NanoHermes in a project directory"
            )
    return ""


def _words(backend: str, policy: Policy, caps: Capabilities) -> str:
    where = "the private temp dir" if policy.level == "read-only" else "the workspace and the private temp dir"
    hidden = ", ".join(policy.shown(p) for p in policy.hidden)
    protected = ", ".join(policy.shown(p) for p in policy.read_only if policy.workspace in p.parents)
    sockets = _socket_words(policy)
    if backend == "bwrap":
        rules = f"writes outside {where} blocked; read-only: {protected}; hidden: {hidden}"
        return f"commands run in bubblewrap: {rules}; {sockets}; {network_words(policy)}"
    if backend == "seatbelt":
        network = "allowed" if policy.network else "blocked"
        rules = f"writes outside {where} blocked; read-only: {protected}; hidden: {hidden}"
        return f"commands run under macOS Seatbelt (sandbox-exec; this profile is untested): {rules}; network {network}"
    network = "network allowed" if policy.network else "network: TCP blocked, UDP (DNS included) not"
    if policy.allow_domains and not policy.network:
        network += "; allow_domains needs bubblewrap, so no host is reachable"
    gaps = "" if policy.level == "read-only" else f"; NOT protected inside the workspace: {protected}"
    return (
        f"Landlock only ({caps.bwrap_problem or 'bubblewrap not used'}): writes outside {where} blocked; "
        f"hidden (unreadable): {hidden}{gaps}; {sockets}; {network}"
    )


def _tilde(policy: Policy, path: Path) -> str:
    home = policy.user_home
    return "~" if path == home else f"~/{path.relative_to(home)}" if home in path.parents else str(path)


def _socket_words(policy: Policy) -> str:
    if not policy.allow_unix_sockets:
        return "Unix sockets blocked"
    listed = ", ".join(policy.shown(p) for p in policy.allow_unix_sockets)
    return f"Unix sockets: only {listed} (and any made after a command starts)"


def network_words(policy: Policy) -> str:
    if policy.network:
        return "network allowed"
    if policy.allow_domains:
        return f"network: only {', '.join(policy.allow_domains)} (through NanoHermes's proxy)"
    return "network blocked"
