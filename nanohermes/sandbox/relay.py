"""Bytes copied both ways between two sockets, and the relay that runs inside the sandbox.

The sandbox's own network namespace has only a loopback of its own, so a command that may reach
some hosts (`[sandbox] allow_domains`) reaches NanoHermes's proxy (sandbox/proxy.py, on the host)
through a Unix socket bound into the sandbox. HTTP clients take a proxy as host and port, not as a
socket path, so inside the sandbox a relay listens on 127.0.0.1 and copies each connection to that
socket. It starts before the Unix-socket filter (sandbox/seccomp.py) is loaded, as a process of
its own, so the command itself still cannot make a Unix socket.

Standard library only: sandbox/inside.py loads this file by path.
"""

from __future__ import annotations

import os
import select
import selectors
import socket
import threading
import time

CHUNK = 65_536
BACKLOG = 64
ACCEPT_RETRY_S = 0.1


def pump(a: socket.socket, b: socket.socket) -> None:
    """Copy what each side sends to the other until both have closed; then close both. A side that
    ends its sending (EOF) ends the other's receiving in turn (half-close), as TLS and HTTP expect."""
    other = {a: b, b: a}
    with selectors.DefaultSelector() as selector:
        for side in other:
            selector.register(side, selectors.EVENT_READ)
        try:
            while other:
                for key, _ in selector.select():
                    source = key.fileobj
                    try:
                        data = source.recv(CHUNK)
                    except OSError:
                        data = b""
                    if data:
                        other[source].sendall(data)
                        continue
                    selector.unregister(source)
                    target = other.pop(source)
                    try:
                        target.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
        except OSError:  # a side went away mid-send: nothing more can be said to either
            pass
    for side in (a, b):
        side.close()


def listen_loopback() -> socket.socket:
    """A listener on a free port of the sandbox's own loopback."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(BACKLOG)
    return listener


def serve(listener: socket.socket, socket_path: str) -> None:
    """Forever: each connection to `listener` copied to a new connection to `socket_path`."""
    while True:
        try:
            client, _ = listener.accept()
        except OSError:  # out of descriptors, say: wait for some to close rather than spin
            time.sleep(ACCEPT_RETRY_S)
            continue
        threading.Thread(target=_relay_one, args=(client, socket_path), daemon=True).start()


def _relay_one(client: socket.socket, socket_path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(socket_path)
    except OSError:
        upstream.close()
        client.close()  # the client sees its connection closed: the proxy is gone
        return
    pump(client, upstream)


def start_detached(listener: socket.socket, socket_path: str) -> None:
    """Run the relay in a grandchild of this process, its standard streams on /dev/null so it
    holds no pipe of the command's open, until this process (the command, once it has exec'd)
    exits: bubblewrap's init waits for every process in the sandbox, so a relay left running
    would keep the sandbox open. Returns at once in this process."""
    command = os.getpid()  # exec keeps the pid: the command's
    watch = os.pidfd_open(command)
    first = os.fork()
    if first:
        os.close(watch)
        os.waitpid(first, 0)
        return
    try:
        if os.fork():
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        threading.Thread(target=serve, args=(listener, socket_path), daemon=True).start()
        select.select([watch], [], [])  # readable once the command has exited
    finally:
        os._exit(0)
