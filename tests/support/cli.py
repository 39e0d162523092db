"""Running the real `nanohermes` executable (or the CLI's entry point in a fresh interpreter)."""

from __future__ import annotations

import os
import subprocess
import sys

BIN = os.path.join(os.path.dirname(sys.executable), "nanohermes")


def run_cli(args, cwd, env_extra=None, input=None, timeout=60) -> subprocess.CompletedProcess:
    """Without `input`, stdin is /dev/null: nothing is piped in (an inherited pipe would be read)."""
    env = {**os.environ, **(env_extra or {})}
    stdin = subprocess.DEVNULL if input is None else None
    return subprocess.run(
        [BIN, *args], cwd=cwd, env=env, input=input, stdin=stdin, capture_output=True, text=True, timeout=timeout
    )


def run_main_with(prelude: str, args, cwd, env_extra=None, timeout=60) -> subprocess.CompletedProcess:
    """The CLI's main() in a fresh interpreter after `prelude` (a fault injected for the test)."""
    code = f"{prelude}\nfrom nanohermes.cli import main\nmain()"
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
