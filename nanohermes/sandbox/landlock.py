"""Landlock (Linux ≥ 5.13): the file and TCP rules, applied by a tiny launcher just before exec.

Run as `python -S -I landlock.py [--write DIR]… [--hide PATH]… [--device PATH]… [--no-tcp]
[--no-unix-sockets] -- COMMAND…`: it builds a ruleset, sets no_new_privs, restricts itself, loads
the Unix-socket filter (sandbox/seccomp.py, loaded by path) when asked, and execs COMMAND, which
inherits the rules with everything it starts. Nothing is ever exec'd unconfined: a step that
fails prints why and exits with LAUNCH_FAILED. This file imports only the standard library
(`-S -I` start-up is ~11 ms; json is left out, it costs ~10 ms more), so it runs by path without
the package on sys.path.

Why a launcher and not `preexec_fn`: the REPL has threads, and Python documents preexec_fn as
unsafe with threads (the child, forked mid-whatever, can deadlock on a lock another thread
held before it runs exec); preexec_fn also stops Popen from using vfork. The launcher costs
~15 ms per command (scripts/bench_sandbox.py), within the 30 ms budget.

Landlock can only allow, never carve an exception out of an allowed tree, so:
- reads: `/` gets READ_DIR (any directory may be listed, so a hidden file's name shows) and
  every entry along the way to a hidden path gets read rights except the hidden one itself —
  its content cannot be read; an entry created later next to a hidden path is unreadable;
- writes: each writable root gets every right, including inside `.git/hooks` or
  `.nanohermes/` under it (only bubblewrap's mounts can keep those read-only);
- network (ABI ≥ 4): TCP bind and connect denied; UDP (DNS included) is not covered by
  Landlock; Unix sockets are refused by the seccomp filter, not by Landlock;
- ABI ≥ 6: signals to processes outside the sandbox and abstract Unix sockets made outside
  it are denied (ptrace and /proc/PID of outside processes are denied since ABI 1).
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys

LAUNCH_FAILED = 125  # like `env` and `timeout`: the launcher failed, the command never ran

# Syscall numbers: Landlock came after the syscall tables were unified, so x86_64, aarch64
# and the other architectures share them.
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1  # flag: return the ABI version instead of a ruleset
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

# Filesystem rights (include/uapi/linux/landlock.h) and the ABI that added them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
ABI1_FS = (1 << 13) - 1  # EXECUTE … MAKE_SYM
REFER = 1 << 13  # ABI 2: renames and links across directories
TRUNCATE = 1 << 14  # ABI 3
# IOCTL_DEV (ABI 5) is left unhandled: device ioctls are no path around the file or network
# rules, and handling it breaks terminals (isatty, window size) for little gain.
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # the rights a rule on a non-directory may hold
READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR
DEVICE_RIGHTS = READ_FILE | WRITE_FILE | TRUNCATE  # `> /dev/null` opens with O_TRUNC
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


# How much of _RulesetAttr each ABI reads: the kernel refuses fields it does not know.
ATTR_SIZE_BY_ABI = ((6, 24), (4, 16), (1, 8))


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> int:
    """The running kernel's Landlock ABI: 0 when it has none (too old, or disabled at boot)."""
    if not sys.platform.startswith("linux"):
        return 0
    libc = _libc()
    version = libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(int(version), 0)


def handled_fs(abi: int) -> int:
    return ABI1_FS | (REFER if abi >= 2 else 0) | (TRUNCATE if abi >= 3 else 0)


class _Ruleset:
    def __init__(self, libc, abi: int, no_tcp: bool):
        self.libc, self.abi = libc, abi
        self.fs = handled_fs(abi)
        net = NET_BIND_TCP | NET_CONNECT_TCP if no_tcp and abi >= 4 else 0
        scoped = SCOPE_SIGNAL | (SCOPE_ABSTRACT_UNIX if no_tcp else 0) if abi >= 6 else 0
        attr = _RulesetAttr(self.fs, net, scoped)
        size = next(size for since, size in ATTR_SIZE_BY_ABI if abi >= since)
        self.fd = self._call(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))

    def _call(self, number: int, *args) -> int:
        result = self.libc.syscall(number, *args)
        if result < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"landlock syscall {number}: {os.strerror(err)}")
        return int(result)

    def allow(self, path: str, rights: int) -> None:
        """Allow `rights` beneath `path` (file rights only, for a non-directory); a path that is
        gone or cannot be opened is skipped: nothing beneath it can be reached anyway."""
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return
        try:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                rights &= FILE_RIGHTS
            rule = _PathBeneath(rights & self.fs, fd)
            self._call(
                SYS_ADD_RULE,
                ctypes.c_int(self.fd),
                ctypes.c_int(RULE_PATH_BENEATH),
                ctypes.byref(rule),
                ctypes.c_uint32(0),
            )
        finally:
            os.close(fd)

    def restrict_self(self) -> None:
        if self.libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        self._call(SYS_RESTRICT_SELF, ctypes.c_int(self.fd), ctypes.c_uint32(0))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def allow_reads_except(ruleset: _Ruleset, hidden: list[str]) -> None:
    """Read rights on everything but the hidden paths (see the module docstring)."""
    if not hidden:
        ruleset.allow("/", READ_RIGHTS)
        return
    ruleset.allow("/", READ_DIR)
    _allow_siblings(ruleset, "/", hidden)


def _allow_siblings(ruleset: _Ruleset, directory: str, hidden: list[str]) -> None:
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        path = entry.path
        if entry.is_symlink():
            real = os.path.realpath(path)
            if any(_inside(real, h) or _inside(h, real) for h in hidden):  # a link into a hidden tree, or to a
                continue  # directory holding one (its real place is walked on its own way down)
        if any(_inside(path, h) for h in hidden):
            continue
        if any(_inside(h, path) for h in hidden):  # on the way to a hidden path: go down, grant its siblings
            _allow_siblings(ruleset, path, hidden)
        else:
            ruleset.allow(path, READ_RIGHTS)


def _parse(args: list[str]) -> tuple[dict[str, list[str]], set[str], list[str]]:
    options: dict[str, list[str]] = {"--write": [], "--hide": [], "--device": []}
    switches: set[str] = set()
    while args and args[0] != "--":
        flag = args.pop(0)
        if flag in ("--no-tcp", "--no-unix-sockets"):
            switches.add(flag)
        elif flag in options and args:
            options[flag].append(args.pop(0))
        else:
            raise ValueError(f"unknown launcher argument {flag!r}")
    if not args[1:]:
        raise ValueError("no command after --")
    return options, switches, args[1:]


def _block_unix_sockets() -> None:
    """sandbox/seccomp.py, run from its file (under -I this folder is not on sys.path; importlib.util
    would cost ~10 ms a command)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seccomp.py")
    with open(path, encoding="utf-8") as source:
        code = compile(source.read(), path, "exec")
    namespace = {"__name__": "nanohermes_sandbox_seccomp", "__file__": path}
    exec(code, namespace)
    namespace["block_unix_sockets"]()


def main(args: list[str]) -> int:
    try:
        options, switches, command = _parse(list(args))
        no_tcp = "--no-tcp" in switches
        abi = abi_version()
        if abi < 1:
            raise OSError("this kernel has no Landlock")
        if no_tcp and abi < 4:
            raise OSError(f"Landlock ABI {abi} cannot block TCP (ABI 4 can)")
        ruleset = _Ruleset(_libc(), abi, no_tcp)
        allow_reads_except(ruleset, [os.path.realpath(p) for p in options["--hide"]])
        for root in options["--write"]:
            ruleset.allow(root, ruleset.fs)
        for device in options["--device"]:
            ruleset.allow(device, DEVICE_RIGHTS)
        ruleset.restrict_self()
        if "--no-unix-sockets" in switches:
            _block_unix_sockets()
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"nanohermes sandbox: cannot apply Landlock ({exc}); the command was not run\n")
        return LAUNCH_FAILED
    try:
        os.execvp(command[0], command)
    except OSError as exc:  # like the shell: 127 not found, 126 found but not runnable
        sys.stderr.write(f"nanohermes sandbox: {command[0]}: {exc.strerror}\n")
        return 127 if isinstance(exc, FileNotFoundError) else 126


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
