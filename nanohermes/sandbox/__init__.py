"""The OS sandbox for what NanoHermes runs on the machine (commands, background tasks, and MCP
stdio servers that opt in).

Levels (`[sandbox] level` in config.toml, `--sandbox LEVEL`):
- `workspace-write` (the default): the workspace and a private temp dir (TMPDIR, one per
  session) are writable; everything else is read-only;
- `read-only`: only the private temp dir is writable;
- `off`: commands run unconfined, with all the user's rights. It must be chosen explicitly:
  when a level cannot be enforced here, `confine` refuses to start commands (fail closed).
`network = false` (the default) cuts the network; `true`, or a command the user allowed,
keeps it.

What the policy protects, at every level but off (bubblewrap enforces all of it; Landlock
alone less, see below):
- read-only even inside the workspace: `.nanohermes/` (skills and settings the agent reads),
  `.git/hooks` and `.git/config` (programs git runs later, outside the sandbox), and
  NanoHermes's state directory ($NANOHERMES_HOME, default ~/.nanohermes); a missing one cannot
  be created (a worktree's `.git` pointer file is kept read-only instead);
- hidden (unreadable): ~/.ssh, ~/.aws, ~/.config/gh, ~/.netrc, ~/.gnupg, the ssh-agent's
  socket, the state directory's config.toml and sessions/, and the `hidden = [...]` paths.

Backends, the first that works here (probe.py says which, in words):
- Linux, bubblewrap (what Codex and Claude Code use): everything above, in a user, mount, pid,
  IPC and (network off) network namespace. It is safe run as root too: the user namespace and
  `--cap-drop ALL` leave root inside no capability over the machine (without them, root in
  bwrap could remount / read-write).
- Linux, Landlock alone (bwrap missing or not allowed, e.g. unprivileged user namespaces off):
  writes outside the writable roots blocked, hidden files unreadable (their names can still be
  listed), TCP connect and bind blocked (ABI ≥ 4). NOT covered: `.nanohermes/`, `.git/hooks`
  and `.git/config` inside the workspace (Landlock can only allow, and the workspace is
  allowed), UDP (DNS included), Unix sockets (the ssh-agent's too), and other processes stay
  visible (not signalable, ABI ≥ 6).
- macOS, Seatbelt (`/usr/bin/sandbox-exec`): a profile written to the same rules, UNTESTED —
  no macOS machine runs NanoHermes's tests.

Not protected by any backend: Unix sockets on the file system other than the ssh-agent's
(D-Bus, a Docker socket: connecting to one is not a write, and a network namespace does not
reach the file system), reads of anything not hidden (source trees, other projects, /etc), a
protected path that is a symbolic link (its target is kept read-only, the link itself can be
replaced), and a `.git` made in a subdirectory of the workspace (its hooks run only if the
user runs git there).

What it costs a command: writes to caches outside the workspace fail (~/.cache for pip, npm,
uv: point them at $TMPDIR or the workspace), `git init` at the workspace's root and `git
commit` in a linked worktree (its git directory is elsewhere) need the user's approval to run
unsandboxed, and each command starts ~15 ms later (bubblewrap; scripts/bench_sandbox.py).

API: `policy_for` (the policy for a session), `confine` (argv → Launch, or SandboxUnavailable),
`unconfined` (the approved bypass), `probe`/`assess` (what is enforced, in words),
`blocked_note` (what a failed command's output says was blocked), `prove` (doctor's live proof).
"""

from nanohermes.sandbox.launch import Launch, confine, unconfined
from nanohermes.sandbox.notes import blocked_note
from nanohermes.sandbox.policy import (
    LEVELS,
    Policy,
    SandboxSettings,
    build_policy,
    make_temp_dir,
    parse_sandbox_table,
    policy_for,
)
from nanohermes.sandbox.probe import Capabilities, Enforcement, assess, probe
from nanohermes.sandbox.proof import ProofCheck, prove

__all__ = [
    "LEVELS",
    "Capabilities",
    "Enforcement",
    "Launch",
    "Policy",
    "ProofCheck",
    "SandboxSettings",
    "assess",
    "blocked_note",
    "build_policy",
    "confine",
    "make_temp_dir",
    "parse_sandbox_table",
    "policy_for",
    "probe",
    "prove",
    "unconfined",
]
