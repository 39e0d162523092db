"""One line per tool call, in a real pty: failures said as failures, what was found said."""

import os
import subprocess

import pytest

from tests.support.scripted_server import call, calls, text
from tests.support.terminal import BIN, Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

FAKE_PYTEST = """import sys
for i in range(30):
    print(f"tests/test_calc.py::test_{i} PASSED")
print("FAILED tests/test_calc.py::test_parse - AssertionError: assert 1 == 2")
print("1 failed, 30 passed in 0.12s")
sys.exit(1)
"""


def run_turn(term: Terminal, prompt: str) -> list[str]:
    term.send(prompt + "\r")
    term.expect("session ")
    term.ready()
    return term.display()


def test_a_failing_command_shows_a_cross_its_exit_status_and_output_tail(server, workspace):
    (workspace / "fake_pytest.py").write_text(FAKE_PYTEST)
    server.add(call("run_command", {"command": "python3 fake_pytest.py"}), text("One test fails."))
    term = Terminal(server, workspace, "--yes")
    screen = run_turn(term, "run the tests")
    line = next(line for line in screen if "run_command command=python3 fake_pytest.py" in line)
    assert line.startswith("✗ ") and "· exit 1 ·" in line
    at = screen.index(line)
    assert screen[at + 1] == "  … 27 more lines · Ctrl-O or /show pages all of it"
    assert screen[at + 5 : at + 7] == [
        "  │ FAILED tests/test_calc.py::test_parse - AssertionError: assert 1 == 2",
        "  │ 1 failed, 30 passed in 0.12s",
    ]
    term.exit()


def test_a_passing_command_shows_a_check_and_its_verdict(server, workspace):
    server.add(call("run_command", {"command": "echo building; echo 5 passed"}), text("ok"))
    term = Terminal(server, workspace, "--yes")
    screen = run_turn(term, "build")
    at = next(i for i, line in enumerate(screen) if "run_command command=echo building" in line)
    assert screen[at].startswith("✓ ") and "· exit 0 ·" in screen[at]
    assert screen[at + 1 : at + 3] == ["  │ building", "  │ 5 passed"]
    term.exit()


def test_a_timed_out_command_says_it_was_killed(server, workspace):
    server.add(call("run_command", {"command": "echo started; sleep 30", "timeout": 1}), text("too slow"))
    term = Terminal(server, workspace, "--yes")
    screen = run_turn(term, "wait")
    line = next(line for line in screen if "run_command command=echo started" in line)
    assert line.startswith("✗ ") and "timed out, process group killed" in line
    term.exit()


def test_reads_greps_and_globs_say_what_they_found(server, workspace):
    (workspace / "app.py").write_text("def main():\n    pass\n\n\ndef helper():\n    pass\n")
    (workspace / "lib.py").write_text("def main_lib():\n    pass\n")
    server.add(
        calls(
            ("read_file", {"path": "app.py", "offset": 2, "limit": 3}),
            ("grep", {"pattern": "def main"}),
            ("glob", {"pattern": "*.py"}),
            ("read_file", {"path": "nope.py"}),
        ),
        text("seen"),
    )
    term = Terminal(server, workspace, "--yes")
    screen = "\n".join(run_turn(term, "look"))
    assert "✓ read_file path=app.py offset=2 limit=3 · lines 2–6 of 6 · " in screen
    assert "✓ grep pattern=def main · 2 matches in 2 files · " in screen
    assert "✓ glob pattern=*.py · 2 files · " in screen
    assert "✗ read_file path=nope.py · error: nope.py does not exist" in screen
    term.exit()


def test_a_declined_action_is_shown_once_with_the_reason(server, workspace):
    server.add(call("run_command", {"command": "rm -rf build"}), text("ok, I will not"))
    term = Terminal(server, workspace, "--mode", "ask", "--sandbox", "off")  # unconfined commands ask
    term.send("clean\r")
    term.expect("allow")
    term.send("no: run make clean instead\r")
    term.expect("session ")
    term.ready()
    screen = term.display()
    shown = [line for line in screen if "rm -rf build" in line and not line.startswith("allow?")]  # rm: exact scope
    assert len(shown) == 2  # the question's preview and the outcome, no echo before
    assert any(
        line.startswith("✗ run_command command=rm -rf build · declined: run make clean instead") for line in screen
    )
    assert not any("wants to run" in line for line in screen)
    term.exit()


def test_a_command_stopped_by_ctrl_c_says_interrupted_and_after_how_long(server, workspace):
    server.add(call("run_command", {"command": "echo begun; sleep 30"}))
    term = Terminal(server, workspace, "--yes")
    term.send("wait\r")
    term.wait_screen("│ begun")
    term.child.sendintr()
    term.expect("session ")
    term.ready()
    line = next(line for line in term.display() if "run_command command=echo begun" in line)
    assert line.startswith("✗ ") and "· interrupted ·" in line
    term.exit()


def test_one_shot_progress_marks_a_failing_command_with_a_cross_and_its_status(server, workspace):
    server.add(call("run_command", {"command": "echo broken; exit 2"}), text("It fails."))
    proc = subprocess.run(
        [BIN, "--base-url", server.url, "--yes", "-p", "run it"],
        cwd=workspace,
        env={**os.environ, "OPENAI_API_KEY": "sk-test"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert "  ✗ $ echo broken; exit 2 · exit 2" in proc.stderr.splitlines()
