"""The OpenAI-compatible server behind `--local`: which program, started how, ready when, stopped how.

The programs, in the order they are tried (README, "No key: a model on this computer"):
1. llama.cpp's `llama-server` on PATH — what the user installed (a package manager, a release);
2. the one the project's local-llm kit built: $LOCAL_LLM_DIR/build/bin/llama-server
   (default ~/.cache/nanohermes-local-llm);
3. llama-cpp-python's `llama_cpp.server`, the `nanohermes[local]` extra, in this interpreter.
llama-server comes first because it does more for a coding agent: with `--jinja` and the
template shipped beside this file it returns Qwen2.5-Coder's ```json calls as `tool_calls`, it says
its context size (GET /v1/models meta.n_ctx, /props) and streams usage; llama_cpp.server returns
those calls as text, which NanoHermes parses (provider/textcalls.py).

The server is NanoHermes's own part, not a command of the model's: it is not sandboxed, it runs in
a process group of its own (ended whole by `stop`), without the provider's key in its environment,
its output in a log file under $NANOHERMES_HOME/logs (kept when it fails, named in the error), and
on Linux it is told to end should NanoHermes be killed without a chance to stop it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from nanohermes.errors import LocalModelError

TEMPLATE = Path(__file__).with_name("qwen-coder-tools.jinja")  # the local-llm kit's: ```json calls → tool_calls
KIT_DIR = Path("~/.cache/nanohermes-local-llm")  # the local-llm kit's default $LOCAL_LLM_DIR
HOST = "127.0.0.1"  # loopback only: the server has no key, so nothing off this machine may reach it
POLL_S = 0.25  # how often readiness is asked for while the model loads
ASK_TIMEOUT = 5.0  # seconds one readiness request may take (a loading server answers 503 at once)
STOP_GRACE = 10.0  # seconds between SIGTERM and SIGKILL: llama-server frees its memory and exits in well under one
LAST_LINES = 12  # of the server's log, in the error when it dies at start
# llama_cpp.server takes HOST and PORT from the environment over its own --host and --port, and a
# CONFIG_FILE over every argument: a PORT set for something else would put it where nobody looks.
PYTHON_SERVER_OVERRIDES = frozenset({"HOST", "PORT", "CONFIG_FILE"})
PR_SET_PDEATHSIG = 1  # Linux prctl(2): the signal a process gets when its parent dies

INSTALL_HINT = (
    "No local model server was found. Install one of: llama.cpp's llama-server on your PATH "
    "(`brew install llama.cpp`, or a release from github.com/ggml-org/llama.cpp), or "
    "`pip install 'nanohermes[local]'` (llama-cpp-python; it compiles llama.cpp, ~10 minutes)."
)


@dataclass(frozen=True)
class ServerProgram:
    kind: str  # "llama-server" or "llama-cpp-python"
    command: tuple[str, ...]  # what runs it, before its arguments
    where: str  # how the user is told which one runs

    def environ(self, base: dict[str, str]) -> dict[str, str]:
        if self.kind != "llama-cpp-python":
            return base
        return {k: v for k, v in base.items() if k not in PYTHON_SERVER_OVERRIDES}

    def argv(self, model: Path, alias: str, port: int, context: int) -> list[str]:
        threads = str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
        if self.kind == "llama-cpp-python":
            return [
                *self.command,
                *("--model", str(model), "--model_alias", alias, "--host", HOST, "--port", str(port)),
                *("--n_ctx", str(context), "--n_threads", threads),
            ]
        # -np 1: one slot holds the whole context (more slots would split it, and n_ctx would not be what we assume)
        return [
            *self.command,
            *("-m", str(model), "-a", alias, "--host", HOST, "--port", str(port), "-c", str(context), "-np", "1"),
            *("-t", threads, "--jinja", "--chat-template-file", str(TEMPLATE), "--no-webui"),
        ]


def find_server(environ=os.environ) -> ServerProgram:
    """The first program that can serve the model (see the module's docstring), else LocalModelError."""
    on_path = shutil.which("llama-server", path=environ.get("PATH"))
    if on_path:
        return ServerProgram("llama-server", (on_path,), f"llama-server ({on_path})")
    kit = Path(environ.get("LOCAL_LLM_DIR") or KIT_DIR).expanduser() / "build" / "bin" / "llama-server"
    if os.access(kit, os.X_OK):
        return ServerProgram("llama-server", (str(kit),), f"llama-server ({kit}, built by the local-llm kit)")
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is not None:
        return ServerProgram(
            "llama-cpp-python", (sys.executable, "-m", "llama_cpp.server"), "llama-cpp-python's llama_cpp.server"
        )
    raise LocalModelError(INSTALL_HINT)


def free_port() -> int:
    """A port nothing listens on now (the system's choice); the server binds it a moment later."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class RunningServer:
    """A started server: `wait_ready`, then `base_url`; `stop` ends its process group."""

    def __init__(self, program: ServerProgram, argv: list[str], port: int, log: Path):
        from nanohermes.signals import held
        from nanohermes.tools.processes import child_env

        self.program, self.port, self.log = program, port, log
        self.started = time.monotonic()
        log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with held():  # a Ctrl-C landing inside Popen would leave the server running, owned by no one
                self.proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=fd,
                    stderr=fd,
                    start_new_session=True,  # its own process group, ended whole
                    env=program.environ(child_env()),
                    preexec_fn=_die_with_parent(),
                )
        except OSError as exc:
            raise LocalModelError(f"Could not start {program.where}: {exc.strerror or exc}.") from None
        finally:
            os.close(fd)

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def wait_ready(self, timeout: float) -> dict:
        """Until GET /v1/models answers 200 (the model is loaded); its answer. LocalModelError when
        the server exits first (its last lines) or is not ready within `timeout` seconds."""
        deadline = self.started + timeout
        while True:
            if self.proc.poll() is not None:
                raise LocalModelError(self._died(f"exited with code {self.proc.returncode} before it was ready"))
            answer = self._models()
            if answer is not None:
                return answer
            if time.monotonic() >= deadline:
                raise LocalModelError(
                    self._died(
                        f"was not ready after {timeout:g} s (local_start_timeout in config.toml gives it longer)"
                    )
                )
            time.sleep(POLL_S)

    def stop(self) -> None:
        """End the server's process group: SIGTERM, SIGKILL after STOP_GRACE; its log removed
        when it stopped cleanly. Never torn by a second Ctrl-C."""
        from nanohermes.signals import deferred
        from nanohermes.tools.processes import end_group, signal_group

        with deferred():
            clean = self.proc.poll() is None
            if clean:
                signal_group(self.proc.pid, signal.SIGTERM)
                try:
                    self.proc.wait(STOP_GRACE)
                except subprocess.TimeoutExpired:
                    signal_group(self.proc.pid, signal.SIGKILL)
                    self.proc.wait()
            end_group(self.proc.pid)  # what it started, if anything, goes with it
            if clean:
                self.log.unlink(missing_ok=True)

    def _models(self) -> dict | None:
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=ASK_TIMEOUT) as response:
                return json.loads(response.read() or b"{}") if response.status == 200 else None
        except (OSError, ValueError):  # not listening yet, 503 while loading, a body that is not JSON yet
            return None

    def _died(self, what: str) -> str:
        self.stop_quietly()
        lines = _tail(self.log, LAST_LINES)
        said = "; its last lines:\n" + "\n".join(lines) if lines else " and printed nothing"
        return f"The local model server ({self.program.where}) {what}{said}\n(the whole log: {self.log})"

    def stop_quietly(self) -> None:
        """Stop it, keeping the log (it says why it failed)."""
        from nanohermes.tools.processes import end_group, signal_group

        if self.proc.poll() is None:
            signal_group(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        end_group(self.proc.pid)


def _tail(path: Path, count: int) -> list[str]:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - 64 * 1024))  # the last lines are in the last 64 KB
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()][-count:]


def _die_with_parent():
    """On Linux, a preexec_fn that has the kernel send the server SIGTERM when NanoHermes dies without
    stopping it (SIGKILL, the OOM killer); None elsewhere. prctl is looked up before the fork, so the
    child only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # NanoHermes died before the request was made
            os._exit(1)

    return preexec
