"""Running the real `nanohermes` executable (or the CLI's entry point in a fresh interpreter)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from tests.support.timing import HANG_GUARD_S

BIN = os.path.join(os.path.dirname(sys.executable), "nanohermes")


def run_cli(args, cwd, env_extra=None, input=None, timeout=60) -> subprocess.CompletedProcess:
    """Without `input`, stdin is /dev/null: nothing is piped in (an inherited pipe would be read)."""
    env = {**os.environ, **(env_extra or {})}
    return _run([BIN, *args], cwd, env, input, timeout)


def run_main_with(prelude: str, args, cwd, env_extra=None, timeout=60) -> subprocess.CompletedProcess:
    """The CLI's main() in a fresh interpreter after `prelude` (a fault injected for the test)."""
    code = f"{prelude}\nfrom nanohermes.cli import main\nmain()"
    env = {**os.environ, **(env_extra or {})}
    return _run([sys.executable, "-c", code, *args], cwd, env, None, timeout)


def _run(argv: list[str], cwd, env: dict, input: str | None, timeout: float) -> subprocess.CompletedProcess:
    """subprocess.run, but a run past `timeout` is aborted with its Python stacks (faulthandler) in
    the error, so a hang seen once under load says where every thread stood."""
    stdin = subprocess.DEVNULL if input is None else subprocess.PIPE
    env = {"PYTHONFAULTHANDLER": "1", **env}
    with subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            try:
                out, err = proc.communicate(timeout=HANG_GUARD_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
            raise AssertionError(f"{argv[1:]} ran past {timeout} s; its stderr:\n{err[-6000:]}") from None
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)
