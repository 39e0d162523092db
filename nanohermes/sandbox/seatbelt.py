"""macOS: a Seatbelt profile for `/usr/bin/sandbox-exec` (pure: a policy in, an argv out).

UNTESTED: NanoHermes's machines and CI run Linux, so this profile has never confined a real
command. It follows the shape of Chrome's and Codex's published profiles — closed by default,
reads allowed but for the hidden paths, writes only under the writable roots and not under
the read-only ones, the network only when allowed — but a macOS release can need a rule it
lacks (a mach service, a sysctl), and a command then fails with "Operation not permitted".
Paths go in as `-D` parameters, never spliced into the profile text, so no path can change
its meaning. sandbox-exec is deprecated by Apple but still shipped and used (Codex, Claude Code).
"""

from __future__ import annotations

from nanohermes.sandbox.policy import Policy

BASE_PROFILE = """(version 1)
(deny default)
; what any program needs: run and fork (children inherit the profile), see and signal its own
(allow process-exec process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow user-preference-read)
(allow ipc-posix-sem ipc-posix-shm)
(allow pseudo-tty)
(allow file-ioctl)
; user and group look-ups, logging, notifications: a short list, not every mach service
; (the keychain's com.apple.SecurityServer stays out of reach)
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.PowerManagement.control"))
(allow file-write-data
  (literal "/dev/null") (literal "/dev/zero") (literal "/dev/dtracehelper")
  (regex #"^/dev/ttys[0-9]+$"))
"""
NETWORK_PROFILE = """(allow network-outbound network-inbound network-bind system-socket)
(allow mach-lookup (global-name "com.apple.trustd.agent") (global-name "com.apple.dnssd.service"))
"""


def _subpaths(prefix: str, paths) -> tuple[list[str], dict[str, str]]:
    names = {f"{prefix}_{i}": str(path) for i, path in enumerate(paths)}
    return [f'(subpath (param "{name}"))' for name in names], names


def seatbelt_profile(policy: Policy) -> tuple[str, dict[str, str]]:
    """The profile text and its parameters (name → path)."""
    hidden, params = _subpaths("HIDDEN", policy.hidden)
    read_only, more = _subpaths("READ_ONLY", policy.read_only)
    params |= more
    parts = [BASE_PROFILE]
    if hidden:
        parts.append("(allow file-read* (require-all " + " ".join(f"(require-not {h})" for h in hidden) + "))\n")
    else:
        parts.append("(allow file-read*)\n")
    writable, more = _subpaths("WRITABLE", policy.writable)
    params |= more
    for root in writable:
        excluded = " ".join(f"(require-not {p})" for p in (*read_only, *hidden))
        parts.append(f"(allow file-write* (require-all {root} {excluded}))\n")
    if policy.network:
        parts.append(NETWORK_PROFILE)
    return "".join(parts), params


def seatbelt_argv(sandbox_exec: str, policy: Policy, argv: list[str]) -> list[str]:
    profile, params = seatbelt_profile(policy)
    return [sandbox_exec, "-p", profile, *(f"-D{name}={value}" for name, value in params.items()), "--", *argv]
