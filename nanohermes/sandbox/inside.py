"""The launcher bubblewrap runs first, inside the sandbox: what a mount cannot do, just before exec.

Run as `python -S -I inside.py [--relay SOCKET] [--no-unix-sockets] -- COMMAND…`:
- `--relay SOCKET`: start the relay (sandbox/relay.py) from a free port of the sandbox's loopback
  to NanoHermes's proxy at SOCKET, and point the command at it (http_proxy, https_proxy and
  their upper-case forms; no_proxy was set by NanoHermes: the sandbox's own loopback stays its own);
- `--no-unix-sockets`: load the Unix-socket filter (sandbox/seccomp.py), after the relay has
  started (the relay needs a Unix socket; the command may not make one).
Then exec COMMAND. Nothing is ever exec'd without what was asked: a step that fails prints why
and exits with LAUNCH_FAILED. Standard library only, loaded by path (`-S -I` keeps start-up short
and out of reach of PYTHONPATH); its two helpers are loaded by path too.
"""

from __future__ import annotations

import os
import sys

LAUNCH_FAILED = 125  # like `env` and `timeout`: the launcher failed, the command never ran
PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY")


class _Sibling:
    """A module of this folder, run from its file (under -I the folder is not on sys.path;
    importlib.util would cost ~10 ms a command)."""

    def __init__(self, name: str):
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
        with open(path, encoding="utf-8") as source:
            code = compile(source.read(), path, "exec")
        namespace = {"__name__": f"nanohermes_sandbox_{name}", "__file__": path}
        exec(code, namespace)
        self.__dict__.update(namespace)


def _sibling(name: str) -> _Sibling:
    return _Sibling(name)


def _parse(args: list[str]) -> tuple[str | None, bool, list[str]]:
    relay, no_unix = None, False
    while args and args[0] != "--":
        flag = args.pop(0)
        if flag == "--relay" and args:
            relay = args.pop(0)
        elif flag == "--no-unix-sockets":
            no_unix = True
        else:
            raise ValueError(f"unknown launcher argument {flag!r}")
    if not args[1:]:
        raise ValueError("no command after --")
    return relay, no_unix, args[1:]


def main(args: list[str]) -> int:
    try:
        relay_path, no_unix, command = _parse(list(args))
        if relay_path:
            relay = _sibling("relay")
            listener = relay.listen_loopback()
            address = f"http://127.0.0.1:{listener.getsockname()[1]}"
            for name in PROXY_VARS:
                os.environ[name] = address
            relay.start_detached(listener, relay_path)
            listener.close()
        if no_unix:
            _sibling("seccomp").block_unix_sockets()
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"nanohermes sandbox: cannot set up the sandbox ({exc}); the command was not run\n")
        return LAUNCH_FAILED
    try:
        os.execvp(command[0], command)
    except OSError as exc:  # like the shell: 127 not found, 126 found but not runnable
        sys.stderr.write(f"nanohermes sandbox: {command[0]}: {exc.strerror}\n")
        return 127 if isinstance(exc, FileNotFoundError) else 126


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
