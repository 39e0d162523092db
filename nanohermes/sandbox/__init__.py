"""The OS sandbox for what NanoHermes runs on the machine: the model's commands (run_command,
background tasks, helpers', a repository's command-file `!` lines), hooks that run after the model
acted or come from the repository, and MCP stdio servers that opt in. Who runs confined is decided
in one place, by the actor (actors.py): the user's own `!` runs with the user's rights.

Levels (`[sandbox] level` in config.toml, `--sandbox LEVEL`):
- `workspace-write` (the default): the workspace and a private temp dir (TMPDIR, one per
  session) are writable; everything else is read-only;
- `read-only`: only the private temp dir is writable (plan mode's commands, whatever the level);
- `off`: commands run unconfined, with all the user's rights. It must be chosen explicitly:
  when a level cannot be enforced here, `confine` refuses to start commands (fail closed).
`network = false` (the default) cuts the network, but for the `allow_domains` hosts, reached
through a proxy on the host (proxy.py, hosts.py; relay.py inside); `true`, or a command the user
allowed, keeps all of it. `allow_unix_sockets` lists the Unix sockets a command may reach; by
default none can be made (seccomp.py).

What the policy protects, at every level but off (bubblewrap enforces all of it; Landlock
alone refuses what it cannot):
- read-only as wholes, even inside the workspace: `.git` (and a worktree's git directory, a
  submodule's `.git`), `.nanohermes/` and `.claude/` — what git runs later outside the sandbox,
  and the settings NanoHermes and Claude Code read; a missing one cannot be created;
- hidden (unreadable): ~/.ssh, ~/.aws, ~/.config/gh, ~/.netrc, ~/.gnupg, the ssh-agent's
  socket, NanoHermes's whole state directory, and the `hidden = [...]` paths.

Backends, the first that works here (probe.py says which, in words):
- Linux, bubblewrap (what Codex and Claude Code use): everything above, in a user, mount, pid,
  IPC and (network off) network namespace, the socket filter loaded by bwrap (`--seccomp`). It is
  safe run as root too: the user namespace and `--cap-drop ALL` leave root inside no capability
  over the machine.
- Linux, Landlock alone (bwrap missing or not allowed): it can only grant, so it cannot keep
  `.git` read-only or a hidden path unreadable under a writable root: it refuses those layouts
  (`workspace-write` always; `landlock_gaps = "accept"` runs them with the read-only paths left
  writable, never the hidden ones). Otherwise writes outside the writable roots, hidden reads,
  TCP, Unix sockets (the same filter) and, ABI ≥ 6, signals are blocked; UDP is not, and
  `allow_domains` gives no network (a TCP rule names a port, not a host).
- macOS, Seatbelt (`/usr/bin/sandbox-exec`): a profile written to the same rules, UNTESTED —
  no macOS machine runs NanoHermes's tests.

Not protected by any backend: reads of anything not hidden (source trees, other projects,
/etc), a protected path that is a symbolic link (its target is kept read-only, the link itself
can be replaced), and a `.git` made in a subdirectory of the workspace (its hooks run only if the
user runs git there).

What it costs a command: writes to caches outside the workspace fail (~/.cache for pip, npm,
uv: point them at $TMPDIR or the workspace); git's own writes (`add`, `commit`, `checkout --`,
`stash`: they rename into .git) need the user's approval to run unsandboxed; each command starts
~20 ms later (bubblewrap; scripts/bench_sandbox.py; scripts/sandbox_probes.py: what held, per backend).

API: `policy_for` (the policy for a session), `confine` (argv → Launch, or SandboxUnavailable),
`unconfined` (the approved bypass), `probe`/`assess` (what is enforced, in words),
`blocked_note` (what a command's output says was blocked), `prove` (doctor's live proof);
`actors.command_policy` (what an actor's command runs under).
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
