"""run_command with real subprocesses: pipes drained, head and tail kept, process groups killed."""

import os
import re
import signal
import threading
import time

import pytest

from nanohermes.errors import ToolInterrupted
from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.builtin import BUILTIN_TOOLS
from nanohermes.tools.shell import CAPTURE_BYTES, run_command, run_shell
from tests.support.processes import alive
from tests.support.timing import GETS_GOING_S, HANG_GUARD_S, NEVER_S

TOOLS = {t.name: t for t in BUILTIN_TOOLS}
NOTE = re.compile(r"… (stdout|stderr) truncated \((\d+) bytes not shown\)")


@pytest.fixture
def ctx(workspace, isolated_home):
    return ToolContext(workspace=workspace, home=isolated_home)


@pytest.fixture
def roomy(workspace, isolated_home):
    """Big enough an output budget that only the 256 KB capture can cut."""
    return ToolContext(workspace=workspace, home=isolated_home, max_output=4_000_000)


def run(ctx, command, timeout=None):
    return run_command.func(ctx, command=command, timeout=timeout)


def dies_soon(pid: int) -> bool:
    """SIGKILL reaches an orphaned grandchild asynchronously: give it a moment to go."""
    deadline = time.monotonic() + HANG_GUARD_S
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


def test_result_shows_command_exit_code_and_both_streams(ctx):
    out = run(ctx, "echo out; echo err >&2; exit 3")
    assert out == "$ echo out; echo err >&2; exit 3\nexit code 3\n[stdout]\nout\n[stderr]\nerr"


def test_no_output_is_said_and_exit_zero_shown(ctx):
    assert run(ctx, "true") == "$ true\nexit code 0\n(no output)"


def test_command_runs_in_the_workspace_with_stdin_from_dev_null(ctx, workspace):
    out = run(ctx, "pwd; cat; echo done", timeout=HANG_GUARD_S)
    assert out == f"$ pwd; cat; echo done\nexit code 0\n[stdout]\n{workspace}\ndone"


def test_one_mb_on_each_stream_at_once_never_blocks(ctx):
    started = time.monotonic()
    command = "(yes a | tr -d '\\n' | head -c 1048576) & (yes b | tr -d '\\n' | head -c 1048576 >&2); wait"
    out = run(ctx, command, timeout=HANG_GUARD_S)
    assert time.monotonic() - started < HANG_GUARD_S  # a blocked pipe would have run into the timeout
    assert out.startswith("$ (yes a") and "\nexit code 0\n" in out
    stdout_part, stderr_part = out.split("[stdout]\n", 1)[1].split("\n[stderr]\n")
    for part, letter in ((stdout_part, "a"), (stderr_part, "b")):
        head, note, tail = part.split("\n")
        assert set(head) == set(tail) == {letter}
        assert int(NOTE.fullmatch(note).group(2)) + len(head) + len(tail) == 1_048_576
    assert len(out.encode()) <= ctx.max_output


def test_capture_of_exactly_256_kb_is_whole(roomy):
    out = run(roomy, f"head -c {CAPTURE_BYTES} /dev/zero | tr '\\0' x")
    assert out.split("[stdout]\n")[1] == "x" * CAPTURE_BYTES


def test_capture_one_byte_over_256_kb_drops_one_byte_with_a_note(roomy):
    out = run(roomy, f"head -c {CAPTURE_BYTES + 1} /dev/zero | tr '\\0' x >&2")
    head, tail = out.split("[stderr]\n")[1].split("\n… stderr truncated (1 bytes not shown)\n")
    assert head == "x" * (CAPTURE_BYTES // 2) and tail == "x" * (CAPTURE_BYTES // 2)


def test_capture_keeps_the_start_and_the_end_of_a_long_stream(roomy):
    out = run(roomy, "seq 1 200000")
    stdout_part = out.split("[stdout]\n", 1)[1]
    assert stdout_part.startswith("1\n2\n3\n") and stdout_part.endswith("\n199999\n200000")
    (n,) = [int(n) for _, n in NOTE.findall(out)]
    assert n == len("\n".join(map(str, range(1, 200001))) + "\n") - CAPTURE_BYTES


def test_what_reaches_the_model_fits_max_output_with_head_and_tail(ctx):
    result = dispatch(ctx, TOOLS, "run_command", {"command": "seq 1 100000; echo FAILED: boom >&2; exit 1"})
    assert len(result.content.encode()) <= ctx.max_output
    assert "output truncated" not in result.content  # shaped by the tool, not clamped by dispatch
    assert "[stdout]\n1\n2\n3\n" in result.content and "\n100000\n[stderr]\nFAILED: boom" in result.content
    assert NOTE.search(result.content).group(1) == "stdout"


def test_chinese_output_is_cut_on_character_boundaries(ctx, roomy):
    command = "python3 -c \"import sys; sys.stdout.write('中文输出' * 100000); sys.stderr.write('错误' * 50000)\""
    for context in (ctx, roomy):
        out = run(context, command)
        assert "\ufffd" not in out
        assert {name for name, _ in NOTE.findall(out)} == {"stdout", "stderr"}


def test_timeout_kills_a_child_that_ignores_sigterm(ctx, workspace):
    started = time.monotonic()
    command = f"trap '' TERM; sleep {NEVER_S:g} & echo $! > child.pid; echo started; wait"
    out = run(ctx, command, timeout=GETS_GOING_S)
    assert GETS_GOING_S <= time.monotonic() - started < GETS_GOING_S + HANG_GUARD_S
    assert f"exit code -9 (SIGKILL); timed out after {GETS_GOING_S:g} s, process group killed" in out
    assert "[stdout]\nstarted" in out
    assert dies_soon(int((workspace / "child.pid").read_text()))


def test_timeout_kills_background_grandchildren_too(ctx, workspace):
    out = run(ctx, f"sleep {NEVER_S:g} & echo $! > bg.pid; sleep {NEVER_S:g}", timeout=GETS_GOING_S)
    assert f"timed out after {GETS_GOING_S:g} s" in out and "exit code -15 (SIGTERM)" in out
    assert dies_soon(int((workspace / "bg.pid").read_text()))


def test_default_timeout_comes_from_the_context(workspace, isolated_home):
    ctx = ToolContext(workspace=workspace, home=isolated_home, command_timeout=1)
    assert "timed out after 1 s" in run(ctx, f"sleep {NEVER_S:g}")  # fires whenever the shell started


def test_background_child_holding_the_pipe_does_not_hang_the_tool(ctx):
    started = time.monotonic()
    out = run(ctx, f"(sleep {NEVER_S:g}; echo LA''TE) & echo early", timeout=NEVER_S)
    assert time.monotonic() - started < HANG_GUARD_S  # not held until the background child ends
    assert "[stdout]\nearly\n" in out and "LATE" not in out
    assert out.endswith(
        "they were ended with it (a command's processes do not outlive it), and their later output was not captured"
    )


def test_long_command_echo_is_shortened(ctx):
    command = "echo " + "x" * 2000 + " > /dev/null"
    header = run(ctx, command).split("\n")[0]
    assert header.startswith("$ echo xxx") and "chars cut]" in header and len(header) < 600


def test_run_command_needs_approval_and_previews_the_command(ctx):
    tool_ = TOOLS["run_command"]
    assert tool_.needs_approval
    assert tool_.preview(ctx, command="rm -rf build") == "$ rm -rf build"
    assert tool_.preview(ctx, command="make", timeout=5) == "$ make\n(timeout 5 s)"


def test_empty_command_and_bad_timeout_are_errors(ctx):
    assert dispatch(ctx, TOOLS, "run_command", {"command": "  "}).content == "error: command is empty"
    assert not dispatch(ctx, TOOLS, "run_command", {"command": "true", "timeout": 0}).ok


def test_the_provider_key_is_not_passed_to_commands(workspace, monkeypatch):
    from nanohermes.tools import ToolContext
    from nanohermes.tools.shell import run_command

    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-leak")
    monkeypatch.setenv("OTHER_SETTING", "visible")
    out = run_command.func(ToolContext(workspace=workspace, home=workspace.parent / "h"), "env")
    assert "sk-do-not-leak" not in out and "OTHER_SETTING=visible" in out


def test_facts_carry_the_interleaved_tail_and_the_line_count(ctx):
    out = run(ctx, "for i in $(seq 1 20); do echo line $i; done; echo oops >&2; exit 1")
    assert out.facts.exit_code == 1
    assert out.facts.tail.splitlines() == ["line 17", "line 18", "line 19", "line 20", "oops"]
    assert out.facts.output_lines == 21


def test_a_carriage_return_overwrites_the_line_in_the_tail(ctx):
    out = run(ctx, r"printf 'progress 10%%\rprogress 100%%\ndone\n'")
    assert out.facts.tail.splitlines() == ["progress 100%", "done"]


def test_output_is_reported_while_the_command_runs(workspace, isolated_home):
    seen = []

    def progress(text):
        seen.append((time.monotonic(), text))

    ctx = ToolContext(workspace=workspace, home=isolated_home, progress=progress)
    started = time.monotonic()
    run(ctx, "echo first; sleep 0.6; echo second; sleep 0.6")
    assert seen and seen[0][1] == "first" and seen[0][0] - started < 0.5
    assert any(text.endswith("second") for _, text in seen)


def test_ctrl_c_the_moment_the_command_starts_leaves_nothing_running(workspace):
    """The child may run (and write its pid) before Popen returns in the parent: a Ctrl-C in that
    gap used to leave the command unowned and running (163 of 200 in a tight loop)."""
    pids = []
    for attempt in range(30):
        pid_file = workspace / f"pid-{attempt}"

        def interrupt_once_it_runs(pid_file=pid_file):
            while not (pid_file.exists() and pid_file.read_text().strip()):
                pass  # no sleep: land as close to the child's start as possible
            os.kill(os.getpid(), signal.SIGINT)

        watcher = threading.Thread(target=interrupt_once_it_runs)
        watcher.start()
        with pytest.raises(KeyboardInterrupt):
            run_shell(f"echo $$ > {pid_file} && exec sleep 30", workspace, timeout=60)
            time.sleep(5)  # the interrupt went elsewhere: let it land here, where raises() sees it
        watcher.join()
        pids.append(int(pid_file.read_text()))
    assert [pid for pid in pids if not dies_soon(pid)] == []


def test_ctrl_c_keeps_what_the_command_printed_for_the_model_and_the_tail_for_the_user(ctx, workspace):
    def interrupt_after_three_lines():
        deadline = time.monotonic() + 120  # a loaded machine may take long to start the command; it runs on
        while time.monotonic() < deadline and "line 3" not in (workspace / "log").read_text(errors="ignore"):
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)

    (workspace / "log").write_text("")
    watcher = threading.Thread(target=interrupt_after_three_lines)
    watcher.start()
    with pytest.raises(ToolInterrupted) as stopped:  # the command prints until it is interrupted
        run(ctx, "for i in $(seq 1 100000); do echo line $i | tee -a log; sleep 0.05; done", timeout=600)
        time.sleep(5)  # the interrupt went elsewhere: let it land here, where raises() sees it
    watcher.join()
    answer, facts = stopped.value.answer, stopped.value.facts
    assert answer.startswith("$ for i in") and "\ninterrupted by the user after " in answer
    assert "[stdout]\nline 1\nline 2\nline 3" in answer
    assert facts.interrupted and facts.exit_code is None and "line 3" in facts.tail and facts.output_lines >= 3
