"""Background tasks with real subprocesses: run_command background=true, task_output, task_stop."""

import re
import time

import pytest

from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.background import MAX_RUNNING_TASKS, TASK_CAPTURE_BYTES, BackgroundTasks
from nanohermes.tools.background_tools import TASK_TOOLS
from nanohermes.tools.builtin import BUILTIN_TOOLS
from nanohermes.tools.processes import KILL_GRACE
from tests.support.timing import GETS_GOING_S, HANG_GUARD_S, NEVER_S
from tests.tools.test_shell import alive, dies_soon

TOOLS = {t.name: t for t in [*BUILTIN_TOOLS, *TASK_TOOLS]}


@pytest.fixture
def tasks():
    manager = BackgroundTasks()
    yield manager
    manager.stop_all()


@pytest.fixture
def ctx(workspace, isolated_home, tasks):
    return ToolContext(workspace=workspace, home=isolated_home, tasks=tasks)


def call(ctx, name, **args):
    result = dispatch(ctx, TOOLS, name, args)
    return result.content


def start(ctx, command, **args) -> str:
    out = call(ctx, "run_command", command=command, background=True, **args)
    return re.search(r"started background task (bg\d+)", out).group(1)


def test_a_background_command_returns_at_once_with_a_task_id(ctx):
    began = time.monotonic()
    out = call(ctx, "run_command", command=f"sleep {NEVER_S:g}; echo late", background=True)
    assert time.monotonic() - began < HANG_GUARD_S  # not the sleep
    assert (
        out.startswith("started background task bg1 (pid ")
        and "task_output id=bg1" in out
        and "task_stop id=bg1" in out
    )
    assert "running for" in call(ctx, "task_output", id="bg1")


def test_task_output_returns_only_what_was_printed_since_the_last_read(ctx):
    task_id = start(ctx, "echo first; until [ -e go ]; do sleep 0.05; done; echo second >&2; echo third")
    first = call(ctx, "task_output", id=task_id)
    while first.endswith("(no new output)"):  # a loaded laptop may start the shell late
        first = call(ctx, "task_output", id=task_id, wait=0.1)
    assert first.endswith("[stdout]\nfirst")
    (ctx.workspace / "go").touch()
    later = call(ctx, "task_output", id=task_id, wait=HANG_GUARD_S)
    assert "\nfirst" not in later and "[stdout]\nthird" in later and "[stderr]\nsecond" in later
    assert "exited with code 0 after" in later
    assert call(ctx, "task_output", id=task_id).endswith("(no new output)")


def test_waiting_returns_as_soon_as_the_task_exits_with_its_exit_code(ctx):
    task_id = start(ctx, "sleep 0.3; echo broken >&2; exit 3")
    began = time.monotonic()
    out = call(ctx, "task_output", id=task_id, wait=NEVER_S)
    assert time.monotonic() - began < HANG_GUARD_S  # not the whole wait
    assert "exited with code 3" in out and "broken" in out


def test_a_task_that_prints_10_mb_is_drained_to_the_end_and_keeps_its_first_512_kb(workspace, isolated_home, tasks):
    roomy = ToolContext(workspace=workspace, home=isolated_home, tasks=tasks, max_output=4_000_000)
    task_id = start(roomy, "head -c 10000000 /dev/zero | tr '\\0' x; echo done >&2")
    out = call(roomy, "task_output", id=task_id, wait=60)
    assert "exited with code 0" in out and "[stderr]\ndone" in out  # never blocked on a full pipe
    task = tasks.get(task_id)
    assert task.stdout.total == 10_000_000 and task.stdout.kept == TASK_CAPTURE_BYTES
    assert out.split("[stdout]\n", 1)[1].count("x") == TASK_CAPTURE_BYTES
    assert (
        f"kept its first {TASK_CAPTURE_BYTES:,} bytes; {10_000_000 - TASK_CAPTURE_BYTES:,} later bytes were dropped"
        in out
    )


def test_a_read_over_the_result_cap_leaves_the_rest_for_the_next_read(ctx):
    task_id = start(ctx, "seq 1 20000")
    first = call(ctx, "task_output", id=task_id, wait=10)
    assert re.search(r"… [\d,]+ more bytes of stdout not read yet: call task_output again", first)
    assert "output truncated" not in first  # the read fits the result cap by itself
    rest = ""
    for _ in range(20):
        rest += "\n" + call(ctx, "task_output", id=task_id)
    numbers = re.findall(r"^\d+$", first + "\n" + rest, re.MULTILINE)
    assert numbers == [str(n) for n in range(1, 20001)]


def test_task_stop_stops_the_task_and_its_children(ctx):
    task_id = start(ctx, "sleep 60 & echo $!; wait")
    out = call(ctx, "task_output", id=task_id, wait=0.5)
    child = int(re.search(r"\[stdout\]\n(\d+)", out).group(1))
    assert alive(child)
    stopped = call(ctx, "task_stop", id=task_id)
    assert stopped.startswith(f"stopped task {task_id}: stopped after") and "SIGTERM" in stopped
    assert dies_soon(child)
    assert "already finished" in call(ctx, "task_stop", id=task_id)


def test_a_timeout_asked_for_kills_a_background_task(ctx):
    task_id = start(ctx, f"echo up; sleep {NEVER_S:g}", timeout=GETS_GOING_S)
    out = call(ctx, "task_output", id=task_id, wait=GETS_GOING_S + HANG_GUARD_S)
    assert f"killed at its {GETS_GOING_S:g} s timeout" in out and "up" in out


def test_unknown_ids_and_too_many_tasks_are_errors_the_model_can_read(ctx):
    assert (
        call(ctx, "task_output", id="bg9")
        == "error: no background task 'bg9' (tasks: none were started in this session)"
    )
    for _ in range(MAX_RUNNING_TASKS):
        start(ctx, "sleep 30")
    out = call(ctx, "run_command", command="sleep 30", background=True)
    assert out.startswith(f"error: {MAX_RUNNING_TASKS} background tasks still have processes running (bg1, ")


def test_without_a_task_manager_background_is_refused(workspace, isolated_home):
    bare = ToolContext(workspace=workspace, home=isolated_home)
    assert (
        call(bare, "run_command", command="true", background=True)
        == "error: background tasks are not available in this session"
    )


def test_stop_all_ends_every_running_task(ctx, tasks):
    pids = [tasks.get(start(ctx, "sleep 60")).pid for _ in range(3)]
    start(ctx, "true")
    time.sleep(0.2)
    assert len(tasks.stop_all()) == 3
    assert not any(alive(pid) for pid in pids)


def test_tasks_that_ignore_sigterm_are_killed_after_one_grace_period_for_all(ctx, tasks):
    pids = [tasks.get(start(ctx, "trap '' TERM; sleep 60")).pid for _ in range(3)]
    time.sleep(0.2)
    began = time.monotonic()
    assert len(tasks.stop_all()) == 3
    assert time.monotonic() - began < len(pids) * KILL_GRACE  # TERM to all at once, then one KILL_GRACE, not one each
    assert all(dies_soon(pid) for pid in pids)
    assert all(t.state == "stopped" for t in tasks.all())
