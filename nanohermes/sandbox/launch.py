"""`confine`: the argv that runs a command inside the sandbox, or a refusal (fail closed).

    launch = confine(["bash", "-c", command], policy, cwd)   # SandboxUnavailable if it cannot be enforced
    try:
        proc = subprocess.Popen(launch.argv, cwd=cwd, env=launch.environ(child_env), start_new_session=True, …)
        …                                                    # wait for it, kill its group on Ctrl-C
    finally:
        launch.release()                                     # after the process group has ended

The argv starts the sandbox (bwrap, the Landlock launcher or sandbox-exec), which execs the
command; the process group the caller makes holds all of it, so killing the group kills
what runs inside. `unconfined` is the bypass for a command the user approved to run outside.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nanohermes.errors import SandboxUnavailable
from nanohermes.sandbox.bwrap import Placeholders, bwrap_argv, survey
from nanohermes.sandbox.policy import Policy
from nanohermes.sandbox.probe import Capabilities, assess, probe
from nanohermes.sandbox.seatbelt import seatbelt_argv

# Run by path, not imported: the launcher loads ctypes, which the agent itself never needs.
LAUNCHER = str(Path(__file__).with_name("landlock.py"))
LOCK_DIR = ("sandbox", "locks")  # under the state directory: the placeholders' flocks
# Devices a command writes to (`> /dev/null`, a terminal): Landlock needs them named.
LANDLOCK_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts")
# Writable under Landlock alone too: POSIX semaphores and shared memory live there (Python's
# multiprocessing locks, so a test suite's Pool), and nothing run later reads it as code.
# (bubblewrap gives each command a /dev/shm of its own.)
LANDLOCK_SHARED_MEMORY = "/dev/shm"


@dataclass
class Launch:
    """What to start: `argv` (the sandbox wrapping the command), `env` to set over the child's
    environment (TMPDIR: the private temp dir), and `backend` that confines it ('bwrap',
    'landlock', 'seatbelt'; 'off' when the level is off; 'unsandboxed' for an approved bypass)."""

    argv: list[str]
    backend: str
    env: dict[str, str] = field(default_factory=dict)
    placeholders: Placeholders | None = field(default=None, repr=False)

    @property
    def confined(self) -> bool:
        return self.backend not in ("off", "unsandboxed")

    def environ(self, base: Mapping[str, str]) -> dict[str, str]:
        return {**base, **self.env}

    def release(self) -> None:
        """Call once the command's process group has ended (also when Popen failed)."""
        if self.placeholders is not None:
            self.placeholders.release()

    def __enter__(self) -> Launch:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def confine(
    argv: Sequence[str],
    policy: Policy,
    cwd: Path | str,
    *,
    capabilities: Capabilities | None = None,
    prefer: str | None = None,
) -> Launch:
    """`argv` wrapped by the best backend here (`prefer` forces one: 'bwrap', 'landlock',
    'seatbelt'); SandboxUnavailable when the policy's level cannot be enforced. With level
    'off' the argv is returned as it is."""
    if not policy.confined:
        return Launch(list(argv), "off")
    caps = capabilities or probe()
    enforcement = assess(policy, caps, prefer)
    if not enforcement.enforced:
        raise SandboxUnavailable(f"The command was not run. Sandbox: {enforcement.summary}")
    policy.temp_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # removed by hand: make it again
    env = {"TMPDIR": str(policy.temp_dir)}
    if enforcement.backend == "bwrap":
        spots = survey((*policy.read_only, *policy.hidden))
        where = Path(os.path.abspath(cwd))  # bwrap's --chdir is taken inside the sandbox, from /
        full, placeholders = bwrap_argv(caps.bwrap, policy, spots, where, list(argv))
        return Launch(full, "bwrap", env, Placeholders(placeholders, policy.state_dir.joinpath(*LOCK_DIR)))
    if enforcement.backend == "landlock":
        return Launch(landlock_argv(caps.launcher_python, policy, list(argv)), "landlock", env)
    return Launch(seatbelt_argv(caps.sandbox_exec, policy, list(argv)), "seatbelt", env)


def landlock_argv(python: str, policy: Policy, argv: list[str]) -> list[str]:
    """The launcher's command line (pure): `-S -I` keeps its start-up at ~11 ms and out of
    reach of PYTHONPATH and site-packages."""
    flags = [*_pairs("--write", (*policy.writable, LANDLOCK_SHARED_MEMORY)), *_pairs("--hide", policy.hidden)]
    flags += _pairs("--device", LANDLOCK_DEVICES)
    if not policy.network:
        flags.append("--no-tcp")
    return [python, "-S", "-I", LAUNCHER, *flags, "--", *argv]


def _pairs(flag: str, paths) -> list[str]:
    return [item for path in paths for item in (flag, str(path))]


def unconfined(argv: Sequence[str]) -> Launch:
    """The bypass: `argv` as it is, for a command the user approved to run outside the sandbox."""
    return Launch(list(argv), "unsandboxed")
