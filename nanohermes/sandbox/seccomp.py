"""The Unix-socket filter: a seccomp program, compiled by libseccomp, that refuses to make a Unix socket.

A Unix socket on the file system is a door to a program running outside the sandbox with the
user's rights (a Docker daemon's socket is the first rung of most container escapes; D-Bus, a
desktop's keyring, an ssh-agent). Connecting to one is no write, so read-only mounts do not stop
it, and a network namespace covers only abstract sockets. What does stop it is refusing the
socket itself: `socket(AF_UNIX, …)` fails with EPERM ("Operation not permitted"), as in Claude
Code's sandbox. `socketpair` stays allowed (a pair of connected sockets reaches nothing outside;
asyncio and multiprocessing use it), and so does every other family (TCP, UDP: the network
rules decide those). io_uring is refused too: since Linux 5.19 it can make a socket without the
socket system call.

libseccomp (libseccomp.so.2, on every systemd distribution) writes the program: it checks the
architecture (a 32-bit or x32 system call cannot slip past a filter written for x86_64) and maps
names to numbers. Under bubblewrap, NanoHermes compiles it once (`compiled`) and bubblewrap loads
it (`--seccomp FD`); where no descriptor can be handed over (an MCP server the SDK starts) or a
relay must start first, the launcher inside does (sandbox/inside.py), as Landlock's does
(sandbox/landlock.py), just before they exec the command. This file imports only the standard
library, so they load it by path.
"""

from __future__ import annotations

import ctypes
import errno
import os

LIBRARY = "libseccomp.so.2"
AF_UNIX = 1  # the same on every Linux architecture (importing socket for it costs a launcher ~9 ms)
ACT_ALLOW = 0x7FFF0000  # SCMP_ACT_ALLOW
ACT_ERRNO = 0x00050000  # SCMP_ACT_ERRNO(x): the call fails with errno x
CMP_EQ = 4  # SCMP_CMP_EQ in enum scmp_compare
REFUSED_WHOLE = ("io_uring_setup", "io_uring_enter", "io_uring_register")


class _ArgCmp(ctypes.Structure):
    """struct scmp_arg_cmp: argument `arg` compared by `op` with `datum_a` (and `datum_b`)."""

    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


def library():
    """libseccomp, or OSError when this machine has none."""
    lib = ctypes.CDLL(LIBRARY, use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def block_unix_sockets() -> None:
    """Load the filter into this process (and all it will exec and start); OSError when it cannot be."""
    lib = library()
    ctx = _filter(lib)
    try:
        _check(lib.seccomp_load(ctx), "seccomp_load")  # sets no_new_privs first (libseccomp's default)
    finally:
        lib.seccomp_release(ctx)


def compiled() -> bytes:
    """The filter as a BPF program, for bubblewrap's `--seccomp FD` (which loads it just before it
    execs the command); OSError when libseccomp cannot make it."""
    lib = library()
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    ctx = _filter(lib)
    read_end, write_end = os.pipe()
    try:
        _check(lib.seccomp_export_bpf(ctx, write_end), "seccomp_export_bpf")
        os.close(write_end)
        write_end = -1
        chunks = []
        while chunk := os.read(read_end, 65_536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        lib.seccomp_release(ctx)
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def _filter(lib):
    """A new filter context holding the rules (the caller releases it)."""
    refuse = ACT_ERRNO | errno.EPERM
    ctx = lib.seccomp_init(ACT_ALLOW)
    if not ctx:
        raise OSError("seccomp_init failed")
    try:
        number = lib.seccomp_syscall_resolve_name(b"socket")
        if number < 0:
            raise OSError("libseccomp does not know the socket system call here")
        unix = (_ArgCmp * 1)(_ArgCmp(0, CMP_EQ, AF_UNIX, 0))
        _check(lib.seccomp_rule_add_array(ctx, refuse, number, 1, unix), "seccomp_rule_add(socket)")
        for name in REFUSED_WHOLE:
            number = lib.seccomp_syscall_resolve_name(name.encode())
            if number >= 0:  # a system call this architecture lacks needs no rule
                _check(lib.seccomp_rule_add_array(ctx, refuse, number, 0, None), f"seccomp_rule_add({name})")
    except BaseException:
        lib.seccomp_release(ctx)
        raise
    return ctx


def _check(result: int, what: str) -> None:
    if result < 0:
        raise OSError(-result, f"{what}: {errno.errorcode.get(-result, -result)}")
