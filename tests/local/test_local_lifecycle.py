"""`nanohermes --local`'s lifecycle with the real CLI and a real server process: a stand-in for
llama-server on PATH (tests/support/standin_llama_server.py) that speaks the OpenAI API on the
port it is given. Started, waited for, the session pointed at it, stopped with its whole process
group however the run ends; a server that dies at start is explained, never a traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import BIN, run_cli
from tests.support.processes import alive

STANDIN = Path(__file__).parents[1] / "support" / "standin_llama_server.py"
GONE_WITHIN = 30.0  # seconds a stopped server's processes may take to go, on a loaded machine


@pytest.fixture
def local(tmp_path, monkeypatch):
    """PATH with the stand-in as llama-server, caches and the kit's folder in tmp; returns a
    helper that writes a model file with the stand-in's instructions."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "llama-server"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STANDIN}" "$@"\n')
    script.chmod(0o755)
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STANDIN_RECORD", str(record))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("LOCAL_LLM_DIR", str(tmp_path / "no-kit"))

    class Local:
        def model(self, words: str = "", name: str = "tiny-coder.gguf") -> Path:
            path = tmp_path / name
            path.write_bytes(b"GGUF" + words.encode())
            return path

        def events(self, kind: str) -> list[dict]:
            if not record.exists():
                return []
            lines = record.read_text().splitlines()
            return [e for e in map(json.loads, lines) if e["event"] == kind]

        def start(self) -> dict:
            (start,) = self.events("start")
            return start

    return Local()


def wait_gone(*pids: int) -> None:
    deadline = time.monotonic() + GONE_WITHIN
    while any(alive(p) for p in pids):
        assert time.monotonic() < deadline, f"still running: {[p for p in pids if alive(p)]}"
        time.sleep(0.05)


def argument(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_a_one_shot_run_is_answered_by_the_local_server_which_is_stopped_after(local, workspace, isolated_home):
    model = local.model("loading:3")
    r = run_cli(["--local", "--model-file", str(model), "-p", "hello"], workspace)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "stand-in tiny-coder n_ctx 8192"
    start = local.start()
    argv = start["argv"]
    assert argument(argv, "-m") == str(model.resolve()) and argument(argv, "-c") == "8192"
    assert argument(argv, "--host") == "127.0.0.1" and argument(argv, "-np") == "1" and "--jinja" in argv
    assert "```json" in Path(argument(argv, "--chat-template-file")).read_text()  # shipped inside the package
    (request,) = local.events("request")
    assert request["body"]["model"] == "tiny-coder" and request["body"]["max_tokens"] == 2048  # an 8K window's
    assert "loading the model tiny-coder" in r.stderr and "local model ready" in r.stderr
    assert "Traceback" not in r.stderr
    wait_gone(start["pid"], start["helper"])  # its whole process group
    assert not list((isolated_home / "logs").glob("local-server-*")), "a clean stop leaves no log behind"


def test_the_window_follows_context_window_and_a_server_that_says_otherwise(local, workspace, isolated_home):
    (isolated_home / "config.toml").write_text("context_window = 4096\n")
    r = run_cli(["--local", "--model-file", str(local.model()), "-p", "hi"], workspace)
    assert r.returncode == 0, r.stderr
    assert argument(local.start()["argv"], "-c") == "4096"
    assert local.events("request")[0]["body"]["max_tokens"] == 1024

    r = run_cli(["--local", "--model-file", str(local.model("n_ctx:16384", "other.gguf")), "-p", "hi"], workspace)
    assert r.returncode == 0, r.stderr
    assert "the server uses a 16,384-token window, not 4,096" in r.stderr
    assert r.stdout.strip() == "stand-in other n_ctx 16384"
    assert local.events("request")[-1]["body"]["max_tokens"] == 4096


def test_a_server_that_dies_at_start_is_explained_in_its_own_words(local, workspace, isolated_home):
    r = run_cli(["--local", "--model-file", str(local.model("die")), "-p", "hi"], workspace)
    assert r.returncode == 1
    assert "exited with code 1 before it was ready" in r.stderr
    assert "error loading model: tensor 'blk.0.attn_q.weight' data is not within the file bounds" in r.stderr
    assert "exiting due to model loading error" in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    (log,) = (isolated_home / "logs").glob("local-server-*.log")  # kept, and named
    assert str(log) in r.stderr
    wait_gone(local.start()["helper"])  # what it left in its group went too


def test_a_server_never_ready_is_stopped_after_the_configured_wait(local, workspace, isolated_home):
    (isolated_home / "config.toml").write_text("local_start_timeout = 2\n")
    r = run_cli(["--local", "--model-file", str(local.model("never-ready")), "-p", "hi"], workspace)
    assert r.returncode == 1
    assert "was not ready after 2 s (local_start_timeout in config.toml gives it longer)" in r.stderr
    assert "server is listening" in r.stderr  # its last lines
    start = local.start()
    wait_gone(start["pid"], start["helper"])


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_the_server_goes_when_nanohermes_is_stopped_mid_request(local, workspace, how):
    """SIGTERM and Ctrl-C stop its whole group on the way out; SIGKILL leaves NanoHermes no way
    out, and the kernel ends the server itself (it asked for SIGTERM when its parent dies)."""
    model = local.model("slow")
    proc = subprocess.Popen(
        [BIN, "--local", "--model-file", str(model), "-p", "hi"],
        cwd=workspace,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not local.events("request"):  # the request is with the server, which takes its time
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(how)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    start = local.start()
    wait_gone(start["pid"], *([start["helper"]] if how != signal.SIGKILL else []))
    if alive(start["helper"]):  # orphaned by a SIGKILL (no real server starts one)
        os.kill(start["helper"], signal.SIGKILL)
    assert proc.returncode == {signal.SIGTERM: 143, signal.SIGINT: 130, signal.SIGKILL: -9}[how]
    assert "Traceback" not in err


def test_the_repl_runs_on_the_local_server_and_stops_it_at_exit(local, workspace):
    import pexpect

    from tests.support.terminal import Child

    child = Child(
        BIN,
        ["--local", "--model-file", str(local.model())],
        cwd=str(workspace),
        env={**os.environ, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"},
        encoding="utf-8",
        timeout=60,
        dimensions=(30, 100),
    )
    child.expect("local model ready")
    child.expect("›")
    child.send("hello there\r")
    child.expect("stand-in tiny-coder n_ctx 8192")
    child.expect("›")
    child.send("/exit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    start = local.start()
    wait_gone(start["pid"], start["helper"])


def test_what_local_refuses_before_starting_anything(local, workspace, tmp_path):
    r = run_cli(["--local", "--base-url", "http://127.0.0.1:9/v1", "-p", "hi"], workspace)
    assert r.returncode == 2 and "--local serves its own model" in r.stderr
    readme = tmp_path / "README.md"
    readme.write_text("# not a model\n")
    r = run_cli(["--local", "--model-file", str(readme), "-p", "hi"], workspace)
    assert r.returncode == 1 and "is not a GGUF model file" in r.stderr
    r = run_cli(["--model-file", str(tmp_path / "missing.gguf"), "-p", "hi"], workspace)
    assert r.returncode == 1 and "missing.gguf: No such file or directory" in r.stderr
    assert local.events("start") == []


def test_no_server_program_says_how_to_get_one(workspace, tmp_path):
    bare = tmp_path / "bare-bin"
    bare.mkdir()
    env = {"PATH": str(bare), "LOCAL_LLM_DIR": str(tmp_path / "no-kit"), "XDG_CACHE_HOME": str(tmp_path / "c")}
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    r = run_cli(["--local", "--model-file", str(model), "-p", "hi"], workspace, env_extra=env)
    assert r.returncode == 1, r.stderr
    assert "No local model server was found" in r.stderr and "nanohermes[local]" in r.stderr


def test_llama_cpp_python_serves_when_no_llama_server_is_found(local, workspace, tmp_path):
    """The `nanohermes[local]` extra's server, run by this interpreter: its own argument names, and
    the environment's PORT (which it would take over --port) left out."""
    package = tmp_path / "site" / "llama_cpp" / "server"
    package.mkdir(parents=True)
    (package.parent / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(f"import runpy\nrunpy.run_path({str(STANDIN)!r}, run_name='__main__')\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path / "site"), "PORT": "1"}
    r = run_cli(["--local", "--model-file", str(local.model()), "-p", "hi"], workspace, env_extra=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "stand-in tiny-coder n_ctx 8192"
    assert "llama-cpp-python's llama_cpp.server" in r.stderr
    start = local.start()
    assert argument(start["argv"], "--n_ctx") == "8192" and argument(start["argv"], "--model_alias") == "tiny-coder"
    assert start["port_env"] is None
    wait_gone(start["pid"], start["helper"])


def test_the_first_run_without_a_key_suggests_local(workspace):
    r = run_cli(["-p", "hi"], workspace)
    assert r.returncode == 1 and "No API key is set" in r.stderr
    assert "`nanohermes --local` runs a small coding model on this computer" in r.stderr
