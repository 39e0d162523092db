"""Language servers for the lsp tests: the real one (python-lsp-server with pyflakes, from the test
extras) and small misbehaving ones, each a real process speaking (or failing to speak) LSP over stdio.

`python tests/support/lsp_servers.py MODE [PIDFILE]` runs one of the misbehaving servers:
- `silent`: reads its input and never answers anything (not even `initialize`);
- `mute`: answers `initialize` and `shutdown`, never publishes diagnostics;
- `stubborn`: like mute, but ignores `exit` and SIGTERM (it must be killed);
- `writer`: like mute, but first tries to write `written-by-server.txt` in its working directory;
- `garbage`: answers `initialize`, then prints a line that is not LSP when a document opens;
- `huge`: answers `initialize`, then announces a message of a terabyte when a document opens;
- `dies`: answers `initialize`, then exits with a message on stderr when a document opens;
- `loud`: publishes nothing for an opened document, then for each change LOUD_COUNT errors whose
  messages carry terminal escapes, a bidi override and a newline.
With PIDFILE its process id is written there first.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
LOUD_COUNT = 50
LOUD_MESSAGE = "\x1b]0;pwned\x07bad \u202ename\nsecond line"


def pylsp_command() -> list[str]:
    """The real server, run by this interpreter (no PATH lookup: the venv need not be on PATH)."""
    return [sys.executable, "-m", "pylsp"]


def fake_command(mode: str, pidfile: Path | None = None) -> list[str]:
    return [sys.executable, str(HERE), mode, *([str(pidfile)] if pidfile else [])]


def lsp_table(command: list[str], **keys) -> dict:
    """`[lsp.python]` as config.toml's parsed table holds it."""
    return {"python": {"command": command, **keys}}


def _read(stream) -> dict | None:
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return json.loads(stream.read(length))


def _send(message: dict) -> None:
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def _on_open(mode: str) -> None:
    if mode == "garbage":
        sys.stdout.buffer.write(b"Traceback (most recent call last): not a header\r\n")
        sys.stdout.buffer.flush()
    elif mode == "huge":
        sys.stdout.buffer.write(b"Content-Length: 1000000000000\r\n\r\n{")
        sys.stdout.buffer.flush()
    elif mode == "dies":
        sys.exit("fake server: crashed on didOpen")


def _publish(document: dict, diagnostics: list) -> None:
    params = {"uri": document["uri"], "version": document["version"], "diagnostics": diagnostics}
    _send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params})


def _error(line: int) -> dict:
    start = {"line": line, "character": 0}
    return {"range": {"start": start, "end": start}, "severity": 1, "message": LOUD_MESSAGE, "code": "\x1b[2J"}


def serve(mode: str) -> None:
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode == "writer":
        try:
            Path("written-by-server.txt").write_text("the server wrote in the workspace")
        except OSError as exc:
            print(f"could not write: {exc}", file=sys.stderr)
    while (message := _read(sys.stdin.buffer)) is not None:
        method = message.get("method")
        if mode == "silent":
            continue
        if method in ("initialize", "shutdown"):
            _send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"capabilities": {}} if method == "initialize" else None,
                }
            )
        elif method == "textDocument/didOpen":
            _on_open(mode)
            if mode == "loud":
                _publish(message["params"]["textDocument"], [])
        elif method == "textDocument/didChange" and mode == "loud":
            _publish(message["params"]["textDocument"], [_error(i) for i in range(LOUD_COUNT)])
        elif method == "exit" and mode != "stubborn":
            return
    if mode == "stubborn":  # its input closed: it stays all the same
        while True:
            signal.pause()


if __name__ == "__main__":
    if len(sys.argv) > 2:
        Path(sys.argv[2]).write_text(str(os.getpid()))
    serve(sys.argv[1])
