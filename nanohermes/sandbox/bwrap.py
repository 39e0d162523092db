"""bubblewrap: the command in its own mount, pid, IPC, user (and network) namespaces.

The view: `/` read-only; a fresh /dev and /proc; the writable roots bound read-write; the
protected paths under them bound read-only over themselves; hidden directories covered by an
empty read-only tmpfs and hidden files by /dev/null. Mounts are made parents first, so the
most specific rule wins whatever the nesting (a temp dir under the read-only state directory).

Flags, and why:
- `--unshare-user --cap-drop ALL`: run as root without a user namespace, the command would
  keep CAP_SYS_ADMIN and could simply `mount -o remount,rw /`; in its own user namespace it
  holds no capability over the machine's mounts, which the kernel locks read-only.
- `--unshare-pid` (with a fresh /proc): the command cannot see, ptrace or read /proc/PID/environ
  of the agent or any other process, and the namespace dies with bwrap: a SIGKILL to the
  process group (run_command's Ctrl-C and timeout) ends even what the command `setsid`-ed away.
- no `--new-session`: it would move the command out of the process group the caller made
  (start_new_session), so killing the group would miss it. It guards against TIOCSTI on a
  controlling terminal, and a command started with start_new_session has none.
- no `--die-with-parent`: its parent-death signal belongs to the thread that started bwrap,
  not to the process, so a background task started from a worker thread is killed when that
  thread ends (every time here, once bwrap is up; a test pins it). The process-group kill
  covers every orderly end; an agent killed by SIGKILL leaves the sandbox running, as it
  would leave an unsandboxed command.
- `--unshare-net` unless the network is allowed: only a loopback of its own.

A protected path that does not exist yet (no `.nanohermes/` in this project) is kept from being
created by an empty directory made at its first missing component and bound read-only over
itself. A directory, not a file: git does not list an empty directory, so a `git add -A` run
meanwhile cannot take it into a commit. `Placeholders.release` removes it once no sandbox uses
it (a shared flock per placeholder, across threads and processes), and only while it is empty.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from nanohermes.sandbox.policy import Policy

PLACEHOLDER_MODE = 0o444  # the empty file an older version left as a mount point (still cleaned up)
PLACEHOLDER_DIR_MODE = 0o555  # the empty directory made as one now: read-only, so a user's own is told apart
CLAIM_TRIES = 20  # × CLAIM_WAIT_S: another sandbox removing the same placeholder takes microseconds
CLAIM_WAIT_S = 0.005
# Every command gets these (see the module docstring); the probe runs bwrap with them too.
BASE_FLAGS = ("--unshare-user", "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc")
ORDER = {"writable": 0, "read_only": 1, "hidden": 2}  # at equal depth, the stricter mount last
PROC_NET_UNIX_BYTES = 4_000_000  # a desktop lists a few hundred sockets, ~150 bytes each
MAX_MASKED_SOCKETS = 2_000  # one mount each; bubblewrap's argv stays far below the kernel's limit
OWN_SOCKET_DIRS = ("nanohermes-proxy-",)  # sandbox/proxy.py's folders: the command's own way out, never masked


@dataclass(frozen=True)
class Spot:
    """What is at a path now: 'dir', 'file' (anything else that exists), 'placeholder' (an
    empty read-only file, as a bwrap mount point left behind) or 'missing'. For 'missing', the
    first component that does not exist, or the file standing in the way (`.git` as a
    worktree's pointer file: nothing can be created under it, but rewritten it could point git
    at a directory of hooks, so it is what gets kept read-only)."""

    kind: str
    first_missing: Path | None = None
    blocker: Path | None = None


def survey(paths) -> dict[Path, Spot]:
    """Look at each path (following links) and, when missing, at its ancestors."""
    return {path: _spot(path) for path in paths}


def _spot(path: Path) -> Spot:
    try:
        info = path.stat()
    except OSError:
        return _missing(path)
    if is_placeholder(path):
        return Spot("placeholder")
    return Spot("dir" if stat.S_ISDIR(info.st_mode) else "file")


def _missing(path: Path) -> Spot:
    for candidate in (*reversed(path.parents), path):
        if not candidate.exists():
            return Spot("missing", first_missing=candidate)
        if candidate != path and not candidate.is_dir():
            return Spot("missing", blocker=candidate)
    return Spot("missing")


def unix_sockets(allowed: tuple[Path, ...], limit: int = MAX_MASKED_SOCKETS) -> tuple[Path, ...]:
    """The Unix sockets bound on the file system of this host now (from /proc/net/unix), except
    `allowed` ones: with an allowlist the socket filter is off, and these are covered instead."""
    try:
        with open("/proc/net/unix", "rb") as table:
            lines = table.read(PROC_NET_UNIX_BYTES).decode("utf-8", "surrogateescape").splitlines()[1:]
    except OSError:
        return ()
    found: dict[Path, None] = {}
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) < 8 or not fields[7].startswith("/"):  # unbound, or abstract (@name)
            continue
        path = Path(fields[7])
        if path.parent.name.startswith(OWN_SOCKET_DIRS):  # NanoHermes's proxies: one a command, come and gone
            continue
        try:
            if not stat.S_ISSOCK(path.lstat().st_mode) or path.resolve() in allowed or path in allowed:
                continue
        except OSError:
            continue
        found[path] = None
        if len(found) >= limit:
            break
    return tuple(found)


def is_placeholder(path: Path) -> bool:
    try:
        info = path.lstat()
        if stat.S_ISDIR(info.st_mode):
            return stat.S_IMODE(info.st_mode) == PLACEHOLDER_DIR_MODE and not any(os.scandir(path))
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size == 0 and stat.S_IMODE(info.st_mode) == PLACEHOLDER_MODE


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def bwrap_argv(
    bwrap: str, policy: Policy, spots: dict[Path, Spot], cwd: Path, argv: list[str], masked: tuple[Path, ...] = ()
) -> tuple[list[str], tuple[Path, ...]]:
    """The full argv, and the placeholders it will create or reuse (pure). `masked`: Unix sockets
    covered by /dev/null (a connect to one is refused)."""
    args = [bwrap, *BASE_FLAGS]
    if not policy.network:  # allow_domains too: the proxy is reached over a Unix socket
        args.append("--unshare-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    mounts = [(root, "writable", ["--bind", str(root), str(root)]) for root in policy.writable]
    placeholders: dict[Path, None] = {}
    for path in policy.read_only:
        target = _protected_target(policy, path, spots[path])
        if target is not None:
            mounts.append((target, "read_only", ["--ro-bind", str(target), str(target)]))
            if spots[path].kind not in ("dir", "file") and target != spots[path].blocker:
                placeholders[target] = None  # made before bwrap starts (Placeholders)
    remount = []
    for path in policy.hidden:
        kind = spots[path].kind
        if kind == "dir":
            mounts.append((path, "hidden", ["--tmpfs", str(path)]))
            remount += ["--remount-ro", str(path)]  # last: a read-only tmpfs could hold no mount points
        elif kind != "missing":
            mounts.append((path, "hidden", ["--ro-bind", "/dev/null", str(path)]))
    for path in masked:
        if not any(_inside(path, hidden) for hidden in policy.hidden):
            mounts.append((path, "hidden", ["--ro-bind", "/dev/null", str(path)]))
    seen: set[tuple[Path, str]] = set()
    for path, kind, mount in sorted(mounts, key=lambda m: (len(m[0].parts), ORDER[m[1]], str(m[0]))):
        if (path, kind) not in seen:
            seen.add((path, kind))
            args += mount
    args += [*remount, "--chdir", str(cwd), "--", *argv]
    return args, tuple(placeholders)


def _protected_target(policy: Policy, path: Path, spot: Spot) -> Path | None:
    """Where to mount to keep `path` read-only: itself, its first missing component, or
    nowhere (outside every writable root it is read-only already; under a hidden one inside its
    writable root, unseen). A writable root inside a hidden directory (a helper's worktree in the
    state directory) shows through it, and so must its protected paths."""
    target = path if spot.kind != "missing" else spot.first_missing or spot.blocker
    roots = [root for root in policy.writable if _inside(target, root)] if target is not None else []
    if not roots:
        return None
    depth = max(len(root.parts) for root in roots)
    if any(_inside(path, hidden) and hidden != path and len(hidden.parts) > depth for hidden in policy.hidden):
        return None
    return target


class Placeholders:
    """Shared flocks on the placeholders a running sandbox depends on. The last sandbox to
    finish removes them; one starting meanwhile waits the microseconds that takes and bwrap
    makes the mount point anew. A lock that cannot be had (a hostile holder) is gone without:
    the placeholder then stays, which protects more, never less."""

    def __init__(self, paths: tuple[Path, ...], lock_dir: Path):
        self._held: list[tuple[Path, int | None]] = []
        if paths:
            try:
                lock_dir.mkdir(parents=True, exist_ok=True)
            except OSError:
                pass
        for path in paths:
            self._held.append((path, _claim(lock_dir / (hashlib.sha256(bytes(path)).hexdigest()[:24] + ".lock"))))
            _make_placeholder(path)

    def release(self) -> None:
        """After the sandbox has ended: remove each placeholder no other sandbox still uses."""
        held, self._held = self._held, []
        for path, fd in held:
            if fd is None:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if is_placeholder(path):
                    path.rmdir() if path.is_dir() else path.unlink()
            except OSError:  # BlockingIOError: still in use; the last user removes it
                pass
            finally:
                os.close(fd)


def _make_placeholder(path: Path) -> None:
    """The empty read-only directory bwrap binds over itself (kept if a sandbox made it already)."""
    try:
        path.mkdir()
    except FileExistsError:
        return
    except OSError:  # bwrap then fails to mount it, and the command is not run (fail closed)
        return
    path.chmod(PLACEHOLDER_DIR_MODE)


def _claim(lock: Path) -> int | None:
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    for _ in range(CLAIM_TRIES):
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            time.sleep(CLAIM_WAIT_S)
    os.close(fd)
    return None
