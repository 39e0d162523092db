"""`nanohermes acp`: JSON-RPC on stdin/stdout (stdio.py), each editor session in a process of its
own (relay.py). The command ends when the editor closes stdin, on SIGTERM or SIGHUP (128 + the
signal), or on Ctrl-C; every session's process stops its turn and saves first.
"""

from __future__ import annotations


def serve(flags: dict) -> int:
    """`nanohermes acp`: relay the editor's sessions to processes of their own; 128 + the signal
    (SIGTERM, SIGHUP) that ended it, else 0."""
    import asyncio

    from nanohermes.acp.relay import relay_stdio
    from nanohermes.acp.stdio import claim_stdio, log_to_stderr

    log_to_stderr()
    fd_in, fd_out = claim_stdio()
    return asyncio.run(relay_stdio(flags, fd_in, fd_out))
