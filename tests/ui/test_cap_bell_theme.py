"""The spending cap, the bell and a light terminal, in a real pty played into pyte (and the cap
in `-p` runs through the real CLI): what issue 47 asked for a day's work without friction."""

from __future__ import annotations

import json
import re

import pytest

from nanohermes.cli_base import EXIT_OVER_BUDGET, EXIT_USAGE
from tests.support.scripted_server import call, text
from tests.support.terminal import Terminal
from tests.test_cli_sessions import ask

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

# $1,000 per million tokens: each scripted request (100 in, 10 out) costs $0.11.
PRICED = '[prices."test-model"]\ninput = 1000\noutput = 1000\n'
OSC_11_WHITE = "\x1b]11;rgb:ffff/ffff/ffff\x1b\\"
DA1_ANSWER = "\x1b[?62;22c"


def commands_forever(server) -> None:
    """A model that never stops calling tools (a new command each time, so no repeat guard)."""
    server.handler = lambda body: call("run_command", {"command": f"echo step {len(server.chat_requests())}"})


def test_the_cap_warns_at_four_fifths_then_stops_the_turn_before_its_next_request(server, workspace, isolated_home):
    (isolated_home / "config.toml").write_text("max_cost = 0.25\n" + PRICED)
    commands_forever(server)
    term = Terminal(server, workspace, "--model", "test-model", "--mode", "auto", "--sandbox", "off")
    term.send("keep going\r")
    term.wait_screen("Stopped at the spending cap")
    lines = term.scrollback()
    warned = next(i for i, line in enumerate(lines) if "spent $0.22 of max_cost $0.25 (88%)" in line)
    stopped = next(
        i for i, line in enumerate(lines) if "Stopped at the spending cap: $0.33 spent of max_cost $0.25" in line
    )
    assert warned < stopped and len(server.chat_requests()) == 3  # the third crossed it; no fourth, no final one
    assert term.exit() == 0


def test_a_p_run_over_its_max_cost_exits_4_with_the_stop_reason(server, workspace, isolated_home):
    (isolated_home / "config.toml").write_text(PRICED)
    commands_forever(server)
    flags = ("--model", "test-model", "--yes", "--sandbox", "off", "--output-format", "json", "--max-cost", "0.2")
    r = ask(server, workspace, "keep going", *flags)
    assert r.returncode == EXIT_OVER_BUDGET and "Stopped at the spending cap" in r.stderr
    result = json.loads(r.stdout)
    assert (result["stop_reason"], result["finished"], result["exit_code"]) == ("max_cost", False, EXIT_OVER_BUDGET)
    assert result["usage"]["cost_usd"] >= 0.2 and len(server.chat_requests()) == 2


def test_max_cost_refuses_to_start_for_an_unpriced_model_unless_allowed(server, workspace):
    server.add(text("done"))
    r = ask(server, workspace, "hi", "--model", "no-such-priced-model", "--max-cost", "1")
    assert r.returncode == EXIT_USAGE and server.chat_requests() == []
    assert "cannot be enforced for no-such-priced-model" in r.stderr and "--allow-unpriced" in r.stderr
    r = ask(server, workspace, "hi", "--model", "no-such-priced-model", "--max-cost", "1", "--allow-unpriced")
    assert r.returncode == 0 and r.stdout.strip() == "done" and "cannot be enforced" in r.stderr


def test_the_bell_rings_when_a_long_turn_ends_and_osc_when_an_approval_waits(server, workspace, isolated_home):
    (isolated_home / "config.toml").write_text('notify = "bell"\nnotify_after = 0\n')
    server.add(text("all done"))
    term = Terminal(server, workspace)
    term.send("hi\r")
    term.expect("all done")
    term.expect("\x07")  # after the answer, before the next prompt
    term.ready()
    assert term.exit() == 0
    (isolated_home / "config.toml").write_text('notify = "osc"\nnotify_after = 0\n')
    server.add(call("write_file", {"path": "a.txt", "content": "x\n"}), text("written"))
    term = Terminal(server, workspace, "--mode", "ask")
    term.send("write it\r")
    term.expect(re.escape("\x1b]9;NanoHermes: approval needed: Write a.txt\x07"))
    term.expect(re.escape("\x1b]777;notify;NanoHermes;approval needed: Write a.txt\x07"))
    term.expect("allow\\?")
    term.send("y\r")
    term.expect("written")
    term.ready()
    assert term.exit() == 0


def test_a_light_terminal_asked_for_its_background_gets_darker_colours(server, workspace):
    (workspace / "a.txt").write_text("hello\n")
    server.add(call("read_file", {"path": "a.txt"}), text("It says hello."))
    term = Terminal(server, workspace, colour=True, wait_ready=False)
    term.child.expect(re.escape("\x1b]11;?"))  # theme = "auto": the terminal is asked, before the first prompt
    term.send(OSC_11_WHITE + DA1_ANSWER)
    term.started()
    term.send("read it\r")
    term.expect("It says hello.")
    term.ready()
    assert "005f00" in term.colours_on_line("read_file path=a.txt")  # the ✓ in a green readable on white
    assert term.exit() == 0


def test_colorfgbg_says_light_without_a_question_and_a_dark_theme_keeps_richs_colours(server, workspace, isolated_home):
    server.add(call("read_file", {"path": "a.txt"}), text("done"))
    (workspace / "a.txt").write_text("hello\n")
    term = Terminal(server, workspace, colour=True, env={"COLORFGBG": "0;15"})
    term.send("read it\r")
    term.expect("done")
    term.ready()
    assert "005f00" in term.colours_on_line("read_file path=a.txt")
    assert term.exit() == 0
    (isolated_home / "config.toml").write_text('theme = "dark"\n')
    server.add(call("read_file", {"path": "a.txt"}), text("done again"))
    term = Terminal(server, workspace, colour=True)
    term.send("read it\r")
    term.expect("done again")
    term.ready()
    assert "green" in term.colours_on_line("read_file path=a.txt")
    assert term.exit() == 0
