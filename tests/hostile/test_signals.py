"""Signals, sent to the real executable: SIGTERM and SIGHUP stop a run as Ctrl-C does (every
open call answered, the session saved, the command's processes ended) and exit 143 / 129; a
second Ctrl-C during the clean-up still exits 130 with a valid session."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pexpect
import pytest

from nanohermes.storage.session import Session
from tests.support.cli import BIN
from tests.support.processes import NEEDS_SIGHUP, alive
from tests.support.scripted_server import Reply, call, prose, text
from tests.support.terminal import Child

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

SECOND_SIGNAL_GAPS_S = (0.01, 0.05, 0.1)  # a second Ctrl-C right after the first: where it used to exit -2
REDRAW_TRIES = 3  # the old failure hit about one SIGHUP in seven sent while keys were being drawn


def start(server, workspace, *args) -> subprocess.Popen:
    # As from an interactive shell: a runner that ignores SIGINT would pass that on to the child.
    return subprocess.Popen(
        [BIN, "-p", "go", "--yes", "--base-url", server.url, *args],
        cwd=workspace,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def wait_for(predicate, within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def saved_messages(home, name: str) -> list[dict]:
    with Session(home, name) as session:  # loads as a resume would: the file is valid
        return session.state.messages


@pytest.mark.parametrize(
    "signum, code",
    [(signal.SIGTERM, 143), pytest.param(signal.SIGHUP, 129, marks=NEEDS_SIGHUP)],
    ids=["SIGTERM", "SIGHUP"],
)
def test_a_termination_signal_during_a_command_is_handled_as_ctrl_c(server, workspace, isolated_home, signum, code):
    server.add(call("run_command", {"command": "sleep 30 & echo $! > bg.pid; echo $$ > sh.pid; sleep 30"}))
    proc = start(server, workspace, "--session", "sig", "--sandbox", "off")  # pids as the system sees them
    wait_for(lambda: (workspace / "bg.pid").exists() and (workspace / "sh.pid").stat().st_size > 0)
    time.sleep(0.1)
    proc.send_signal(signum)
    _out, err = proc.communicate(timeout=20)
    assert proc.returncode == code, err
    assert f"stopped by {signal.Signals(signum).name} (sessions are saved as they go)" in err and "Traceback" not in err
    last = saved_messages(isolated_home, "sig")[-1]
    assert (
        last["role"] == "tool"
        and last["content"] == f"[interrupted: NanoHermes was stopped by {signal.Signals(signum).name}]"
    )
    for pid_file in ("bg.pid", "sh.pid"):  # the shell and what it put in the background
        pid = int((workspace / pid_file).read_text())
        wait_for(lambda pid=pid: not alive(pid), within=5)


def test_a_second_ctrl_c_during_the_clean_up_still_exits_130_with_a_valid_session(server, workspace, isolated_home):
    for n, gap in enumerate(SECOND_SIGNAL_GAPS_S):
        server.add(Reply(content=prose(1_000, "slow"), delay=0.05, chunk_size=5))
        before = len(server.chat_requests())
        proc = start(server, workspace, "--session", f"twice{n}")
        wait_for(lambda before=before: len(server.chat_requests()) > before)
        time.sleep(0.2)  # streaming by now
        proc.send_signal(signal.SIGINT)
        time.sleep(gap)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=20)
        assert proc.returncode == 130, (gap, proc.returncode, err)
        last = saved_messages(isolated_home, f"twice{n}")[-1]
        assert last["role"] == "assistant" and last["content"].endswith("[interrupted by user]"), gap


def spawn_repl(server, workspace, *args) -> Child:
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100", "LINES": "40", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = Child(
        BIN,
        ["--base-url", server.url, *args],
        cwd=str(workspace),
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(40, 100),
    )
    child.expect("›")
    return child


def hang_up(child: pexpect.spawn) -> int:
    child.kill(signal.SIGHUP)
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


@NEEDS_SIGHUP
def test_sighup_at_the_repl_prompt_saves_the_session_and_exits_129(server, workspace, isolated_home):
    server.add(text("first answer"))
    child = spawn_repl(server, workspace, "--session", "hup")
    child.send("hello\r")
    child.expect("first answer")
    child.expect("›")
    assert hang_up(child) == 129
    contents = [m["content"] for m in saved_messages(isolated_home, "hup")]
    assert contents == ["hello", "first answer"]
    stats = json.loads((isolated_home / "sessions" / "hup.jsonl").read_text().splitlines()[-1])
    assert stats["type"] == "stats"  # closed properly, not torn


@NEEDS_SIGHUP
def test_sighup_while_the_prompt_is_redrawing_still_exits(server, workspace):
    """The signal lands inside the prompt's event loop (asyncio logs and swallows most
    BaseExceptions raised in its callbacks; it used to keep the REPL running)."""
    for _ in range(REDRAW_TRIES):
        child = spawn_repl(server, workspace)
        child.send("typing while the terminal closes " * 3)
        assert hang_up(child) == 129
