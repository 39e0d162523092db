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

import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nanohermes.errors import SandboxUnavailable
from nanohermes.sandbox.bwrap import Placeholders, bwrap_argv, survey, unix_sockets
from nanohermes.sandbox.policy import Policy
from nanohermes.sandbox.probe import Capabilities, assess, probe
from nanohermes.sandbox.seatbelt import seatbelt_argv

# Run by path, not imported: the launchers load ctypes, which the agent itself never needs.
LAUNCHER = str(Path(__file__).with_name("landlock.py"))
INSIDE = str(Path(__file__).with_name("inside.py"))  # bubblewrap's: the relay and the socket filter
# The sandbox's own loopback stays its own (a test suite's local server): never sent to the proxy.
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
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
    proxy: object | None = field(default=None, repr=False)  # sandbox/proxy.py's Proxy, for allow_domains
    pass_fds: tuple[int, ...] = ()  # descriptors the sandbox reads at start (Popen's pass_fds), closed at release

    @property
    def refused_hosts(self) -> list[str]:
        """The hosts the command asked the proxy for and was refused (readable after release)."""
        return list(self.proxy.refused) if self.proxy is not None else []

    @property
    def confined(self) -> bool:
        return self.backend not in ("off", "unsandboxed")

    def environ(self, base: Mapping[str, str]) -> dict[str, str]:
        return {**base, **self.env}

    def release(self) -> None:
        """Call once the command's process group has ended (also when Popen failed)."""
        if self.placeholders is not None:
            self.placeholders.release()
            self.placeholders = None
        if self.proxy is not None:
            self.proxy.close()
        for fd in self.pass_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.pass_fds = ()

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
    fds: bool = True,
) -> Launch:
    """`argv` wrapped by the best backend here (`prefer` forces one: 'bwrap', 'landlock',
    'seatbelt'); SandboxUnavailable when the policy's level cannot be enforced. With level
    'off' the argv is returned as it is. `fds`: the caller starts the process with
    `pass_fds=launch.pass_fds` (False: it cannot, as for an MCP server the SDK starts)."""
    if not policy.confined:
        return Launch(list(argv), "off")
    caps = capabilities or probe()
    enforcement = assess(policy, caps, prefer)
    if not enforcement.enforced:
        raise SandboxUnavailable(f"The command was not run. Sandbox: {enforcement.summary}")
    policy.temp_dir.mkdir(mode=0o700, parents=True, exist_ok=True)  # removed by hand: make it again
    env = {"TMPDIR": str(policy.temp_dir)}
    if enforcement.backend == "bwrap":
        return _bwrap_launch(caps, policy, Path(os.path.abspath(cwd)), list(argv), env, fds)
    if enforcement.backend == "landlock":
        return Launch(landlock_argv(caps.launcher_python, policy, list(argv)), "landlock", env)
    return Launch(seatbelt_argv(caps.sandbox_exec, policy, list(argv)), "seatbelt", env)


def _bwrap_launch(
    caps: Capabilities, policy: Policy, where: Path, argv: list[str], env: dict[str, str], fds: bool
) -> Launch:
    """bubblewrap's mounts and the socket filter, which bubblewrap loads from a pipe (`--seccomp FD`,
    compiled once a process); the launcher inside instead when a proxy's relay must start first or
    no descriptor can be handed over. `where`: bwrap's --chdir is taken inside the sandbox, from /."""
    from nanohermes.sandbox.proxy import Proxy

    proxy = Proxy(policy.allow_domains) if policy.proxied else None
    pass_fds: tuple[int, ...] = ()
    try:
        flags = ["--relay", str(proxy.path)] if proxy else []
        seccomp: list[str] = []
        if not policy.allow_unix_sockets:
            if fds and not proxy:
                pass_fds = (_filter_pipe(),)
                seccomp = ["--seccomp", str(pass_fds[0])]
            else:
                flags.append("--no-unix-sockets")
        inner = [caps.launcher_python, "-S", "-I", INSIDE, *flags, "--", *argv] if flags else argv
        masked = unix_sockets(policy.allow_unix_sockets) if policy.allow_unix_sockets else ()
        spots = survey((*policy.read_only, *policy.hidden))
        full, placeholders = bwrap_argv(caps.bwrap, policy, spots, where, inner, masked)
        full[1:1] = seccomp  # before the mounts: read while bwrap sets up, loaded just before exec
        if proxy:
            env |= {"no_proxy": no_proxy(policy), "NO_PROXY": no_proxy(policy)}
        lock_dir = policy.state_dir.joinpath(*LOCK_DIR)
        return Launch(full, "bwrap", env, Placeholders(placeholders, lock_dir), proxy, pass_fds)
    except BaseException:
        if proxy:
            proxy.close()
        for fd in pass_fds:
            os.close(fd)
        raise


@functools.cache
def _compiled_filter() -> bytes:
    from nanohermes.sandbox.seccomp import compiled

    return compiled()


def _filter_pipe() -> int:
    """A pipe's read end holding the whole filter (a few hundred bytes: far below a pipe's buffer)."""
    try:
        program = _compiled_filter()
    except OSError as exc:
        raise SandboxUnavailable(f"The command was not run. The Unix-socket filter cannot be made: {exc}") from None
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, program)
    finally:
        os.close(write_end)
    return read_end


def no_proxy(policy: Policy) -> str:
    """The sandbox's own loopback, unless the user listed it (then the host's is meant)."""
    return ",".join(name for name in LOOPBACK_NAMES if name not in policy.allow_domains)


def landlock_argv(python: str, policy: Policy, argv: list[str]) -> list[str]:
    """The launcher's command line (pure): `-S -I` keeps its start-up at ~11 ms and out of
    reach of PYTHONPATH and site-packages. Under Landlock, allow_domains leaves the network off:
    a TCP rule names a port, not a host, so no proxy could be the only way out."""
    flags = [*_pairs("--write", (*policy.writable, LANDLOCK_SHARED_MEMORY)), *_pairs("--hide", policy.hidden)]
    flags += _pairs("--device", LANDLOCK_DEVICES)
    if not policy.network:
        flags.append("--no-tcp")
    if not policy.allow_unix_sockets:
        flags.append("--no-unix-sockets")
    return [python, "-S", "-I", LAUNCHER, *flags, "--", *argv]


def _pairs(flag: str, paths) -> list[str]:
    return [item for path in paths for item in (flag, str(path))]


def unconfined(argv: Sequence[str]) -> Launch:
    """The bypass: `argv` as it is, for a command the user approved to run outside the sandbox."""
    return Launch(list(argv), "unsandboxed")
