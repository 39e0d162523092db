"""Signs of life on a terminal while the model, a command or the summariser works — and none
of it on `-p` stdout or in piped output."""

import json
import re

import pytest

from tests.support.cli import run_cli
from tests.support.scripted_server import Reply, call, text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPINNER_LINE = re.compile(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] waiting for the model · (\d+\.\d)s")


def test_a_spinner_counts_seconds_while_the_server_delays_the_first_token(server, workspace):
    server.add(Reply(content="Here it is.", chunk_size=50, delay=1.2, usage=None))  # three chunks, 1.2 s apart
    term = Terminal(server, workspace)
    term.send("slow question\r")
    term.wait_screen("waiting for the model")
    first = next(float(m.group(1)) for line in term.display() if (m := SPINNER_LINE.search(line)))
    term.pump(0.6)
    term.wait_screen("waiting for the model")
    later = [float(m.group(1)) for line in term.display() if (m := SPINNER_LINE.search(line))]
    assert later and later[0] > first  # the seconds move while nothing arrives
    term.expect("session ")
    term.ready()
    assert not any("waiting for the model" in line for line in term.scrollback())  # gone when done
    term.exit()


def test_a_running_command_shows_its_elapsed_time_and_last_output_line(server, workspace):
    command = "for i in 1 2 3 4; do echo step $i; sleep 0.3; done"
    server.add(call("run_command", {"command": command}), text("done"))
    term = Terminal(server, workspace, "--yes")
    term.send("run it\r")
    term.wait_screen("│ step 3")
    running = [line for line in term.display() if "run_command command=for i in" in line]
    assert running and re.search(r"· \d+\.\ds$", running[0])
    term.expect("session ")
    term.ready()
    assert not any(line[:1] in SPINNER for line in term.display() if line)  # the live status is gone
    assert any(line.startswith("✓ run_command command=for i in") and "exit 0" in line for line in term.display())
    term.exit()


def test_compacting_context_is_shown_while_the_summariser_works(server, workspace):
    server.add(*[call("read_file", {"path": f"f{i}.txt"}) for i in range(6)], text("looked"))
    server.handler = lambda body: Reply(content="A summary of the work.", chunk_size=50, delay=0.6, usage=None)
    term = Terminal(server, workspace, "--yes")
    term.send("look around\r")
    term.expect("session ")
    term.ready()
    term.send("/compact\r")
    term.wait_screen("compacting context…")
    term.expect("compacted on request")
    term.ready()
    assert not any("compacting context…" in line for line in term.display())
    term.exit()


def test_one_shot_output_has_no_progress_on_stdout_or_stderr(server, workspace):
    server.add(
        call("run_command", {"command": "echo hi; sleep 0.5"}), Reply(content="The answer.", delay=0.3, chunk_size=4)
    )
    proc = run_cli(["--base-url", server.url, "--yes", "-p", "go"], workspace, {"OPENAI_API_KEY": "sk-test"})
    assert proc.returncode == 0 and proc.stdout == "The answer.\n"
    assert "\x1b" not in proc.stderr and "waiting for the model" not in proc.stderr
    assert not re.search("[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]", proc.stderr)


def test_stream_json_carries_no_progress_events(server, workspace):
    server.add(call("run_command", {"command": "echo hi; sleep 0.6; echo there"}), text("done"))
    args = ["--base-url", server.url, "--yes", "-p", "go", "--output-format", "stream-json"]
    proc = run_cli(args, workspace, {"OPENAI_API_KEY": "sk-test"})  # 30 s was too short beside a busy llama.cpp
    kinds = [json.loads(line)["type"] for line in proc.stdout.splitlines()]
    assert "tool_finished" in kinds
    assert not {"request_started", "tool_progress", "summary_started", "summary_finished"} & set(kinds)
