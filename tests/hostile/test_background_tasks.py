"""Background tasks that try to outgrow their session, with real processes: a task holds its
place under the limit while any of its processes lives (not only its shell), a `setsid`
grandchild is stopped with it, task_output does not wait for a grandchild holding the pipes
once the shell exited, finished tasks let their captures go; an MCP server whose `cwd` does
not exist is said to be that, not a missing command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.background import KEPT_FINISHED, MAX_RUNNING_TASKS, BackgroundTasks
from nanohermes.tools.background_tools import TASK_TOOLS
from nanohermes.tools.builtin import BUILTIN_TOOLS
from tests.support.mcp_servers import demo_settings, toml_for
from tests.support.processes import alive
from tests.support.timing import HANG_GUARD_S
from tests.tools.test_shell import dies_soon

pytestmark = pytest.mark.subprocess

TOOLS = {t.name: t for t in [*BUILTIN_TOOLS, *TASK_TOOLS]}
QUICK_S = HANG_GUARD_S  # a read that does not wait for a 300 s grandchild; room for a loaded machine


@pytest.fixture
def tasks():
    manager = BackgroundTasks()
    yield manager
    manager.stop_all()


@pytest.fixture
def ctx(workspace, isolated_home, tasks):
    return ToolContext(workspace=workspace, home=isolated_home, tasks=tasks)


def run(ctx, name, **args) -> str:
    return dispatch(ctx, TOOLS, name, args).content


def start(ctx, command: str) -> str:
    out = run(ctx, "run_command", command=command, background=True)
    return re.search(r"started background task (bg\d+)", out).group(1)


def pid_from(path, timeout: float = 10) -> int:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return int(path.read_text())


def mcp_list(home, workspace) -> subprocess.CompletedProcess:
    """`nanohermes mcp list`, as a user runs it."""
    env = {**os.environ, "NANOHERMES_HOME": str(home)}
    cmd = [sys.executable, "-m", "nanohermes", "mcp", "list"]
    return subprocess.run(cmd, cwd=workspace, capture_output=True, text=True, env=env, timeout=60)


def test_a_setsid_grandchild_is_stopped_with_its_task(ctx, tasks, workspace):
    task = start(ctx, "setsid sleep 300 >/dev/null 2>&1 & echo $! > pid")
    pid = pid_from(workspace / "pid")
    tasks.get(task).wait(HANG_GUARD_S)  # the shell has exited; the grandchild left its group
    assert alive(pid)
    tasks.stop_all()  # what the end of the session does
    assert dies_soon(pid)


def test_the_limit_counts_tasks_whose_processes_live_on_after_their_shell(ctx, tasks):
    for _ in range(MAX_RUNNING_TASKS):
        start(ctx, "sleep 300 >/dev/null 2>&1 &")  # the shell exits at once; its sleep runs on
    time.sleep(0.5)
    out = run(ctx, "run_command", command="true", background=True)
    assert out.startswith(f"error: {MAX_RUNNING_TASKS} background tasks still have processes running"), out


def test_task_output_does_not_wait_for_a_grandchild_holding_the_pipes(ctx):
    task = start(ctx, "sleep 300 & echo ready")
    began = time.monotonic()
    out = run(ctx, "task_output", id=task, wait=60)
    assert time.monotonic() - began < QUICK_S
    assert "exited with code 0" in out and "ready" in out


def test_finished_tasks_let_their_captures_go(ctx, tasks):
    read = start(ctx, "head -c 5000 /dev/zero | tr '\\0' x")
    tasks.get(read).wait(HANG_GUARD_S)
    assert "x" * 100 in run(ctx, "task_output", id=read)
    assert len(tasks.get(read).stdout.data) == 0  # read whole and finished: not kept all session
    unread = [start(ctx, "echo never-read") for _ in range(KEPT_FINISHED + 2)]
    for task in unread:
        tasks.get(task).wait(HANG_GUARD_S)
    start(ctx, "true")  # starting one more lets the oldest finished captures go
    out = run(ctx, "task_output", id=unread[0])
    assert "[stdout]" not in out and "11 bytes of stdout were never read and are gone" in out
    assert "[stdout]\nnever-read" in run(ctx, "task_output", id=unread[-1])


def test_an_mcp_server_whose_cwd_is_missing_is_said_to_be_that(isolated_home, workspace):
    missing = workspace / "no-such-dir"
    table = toml_for(demo_settings()) + f'cwd = "{missing}"\n'
    (isolated_home / "config.toml").write_text(table)
    done = mcp_list(isolated_home, workspace)
    assert f"its cwd '{missing}' is not a directory" in done.stdout, done.stdout + done.stderr
    assert "was not found" not in done.stdout


def test_an_mcp_servers_stderr_log_is_capped_and_keeps_its_last_lines(isolated_home, workspace):
    from nanohermes.mcp.transport import MAX_LOG_BYTES

    flood = workspace / "flood.sh"
    demo = demo_settings()
    flood.write_text(
        "head -c 5000000 /dev/zero | tr '\\0' x >&2; echo >&2; echo last words >&2\n"
        f'exec "{demo.command}" "{demo.args[0]}"\n'
    )
    (isolated_home / "config.toml").write_text(f'[mcp.servers.demo]\ncommand = "bash"\nargs = ["{flood}"]\n')
    done = mcp_list(isolated_home, workspace)
    assert "running · 9 tool(s)" in done.stdout, done.stdout + done.stderr
    log = (isolated_home / "mcp" / "logs" / "demo.log").read_bytes()
    assert len(log) <= MAX_LOG_BYTES and log.startswith(b"[NanoHermes: this log started over")
    assert b"last words" in log
