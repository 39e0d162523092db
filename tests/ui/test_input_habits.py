"""The habits a Claude Code or Codex user brings to the prompt, on an emulated screen: @paths
completed and attached, !commands, messages queued while a turn runs, ways to leave, the
described slash menu, long pastes collapsed."""

import time

import pexpect
import pytest

from nanohermes.sandbox.probe import probe
from tests.support.scripted_server import Reply, prose, text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"  # a terminal's bracketed paste


def users_messages(server, request: int = -1) -> list[str]:
    return [m["content"] for m in server.chat_requests()[request]["messages"] if m["role"] == "user"]


def calc_workspace(workspace):
    (workspace / "calc").mkdir()
    (workspace / "calc" / "ops.py").write_text("def add(a, b):\n    return a + b\n")
    (workspace / "calc" / "other.py").write_text("x = 1\n")
    (workspace / "calc" / "debug.log").write_text("noise\n")
    (workspace / ".gitignore").write_text("*.log\n")


def test_at_path_tab_completes_workspace_files_and_leaves_gitignored_ones_out(server, workspace, keep_screen):
    calc_workspace(workspace)
    server.add(text("It adds."))
    term = Terminal(server, workspace)
    term.send("what does @calc/o")
    term.wait_screen("@calc/other.py")  # the menu, as you type
    assert not any("debug.log" in line for line in term.display())
    term.send("\t")
    term.wait_screen("› what does @calc/ops.py")
    term.settle()
    keep_screen("@file completion", term)
    term.send("\r")
    term.expect("It adds")
    term.ready()
    sent = users_messages(server)[-1]
    assert sent.startswith("what does @calc/ops.py\n\n[NanoHermes attached") and "return a + b" in sent
    assert term.exit() == 0


def test_an_at_path_that_names_nothing_is_said_before_sending_and_enter_again_sends_it(server, workspace):
    calc_workspace(workspace)
    server.add(text("Sent anyway."))
    term = Terminal(server, workspace)
    term.send("fix @calc/nope.py\r")
    term.expect("not sent: @calc/nope.py names no file or directory")
    term.ready()
    assert server.chat_requests() == []
    assert "› fix @calc/nope.py" in term.display()  # given back to edit
    term.send("\r")
    term.expect("Sent anyway")
    term.ready()
    assert users_messages(server)[-1] == "fix @calc/nope.py"
    term.exit()


def test_an_at_directory_sends_its_listing(server, workspace):
    calc_workspace(workspace)
    server.add(text("Two files."))
    term = Terminal(server, workspace)
    term.send("what is in @calc/\r")
    term.expect("Two files")
    term.ready()
    sent = users_messages(server)[-1]
    assert "directory calc/: 2 files" in sent and "calc/ops.py" in sent and "debug.log" not in sent
    term.exit()


def test_bang_command_runs_in_the_workspace_as_a_tool_line_and_its_output_joins_the_next_message(
    server, workspace, keep_screen
):
    import subprocess

    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    (workspace / "notes.txt").write_text("todo\n")
    server.add(text("You have one untracked file."))
    term = Terminal(server, workspace)
    term.send("!git status\r")
    term.expect("goes to the model with your next message")
    term.ready()
    term.settle()
    keep_screen("!git status", term)
    screen = term.display()
    line = next(line for line in screen if "! git status" in line)
    assert line.startswith("✓ ! git status · exit 0")
    assert any("│ " in line and "notes.txt" in line for line in screen)
    assert server.chat_requests() == []  # nothing was sent, nothing was asked
    term.send("what is untracked?\r")
    term.expect("one untracked file")
    term.ready()
    sent = users_messages(server)[-1]
    assert sent.startswith("what is untracked?\n\n[The user ran this command in the workspace themselves")
    assert "$ git status\nexit code 0" in sent and "notes.txt" in sent
    assert "[NanoHermes attached" not in sent  # the files the output names are not attached
    term.exit()


@pytest.mark.skipif(
    not (probe().bwrap or probe().landlock_abi >= 4), reason="neither bubblewrap nor Landlock ABI 4 works here"
)
def test_bang_command_runs_as_the_user_outside_the_sandbox_the_model_is_in(server, workspace, tmp_path):
    outside = tmp_path / "outside.txt"
    term = Terminal(server, workspace)
    term.send(f"!echo hi > {outside}\r")
    term.expect("goes to the model")
    term.ready()
    assert outside.read_text() == "hi\n"  # what the user typed, with the user's rights
    screen = term.display()
    assert any(line.startswith("✓ ! echo hi >") for line in screen)
    assert any("ran as you, outside the sandbox" in line for line in screen)
    term.exit()


def test_enter_while_a_turn_runs_queues_the_message_shown_as_queued_and_sent_when_the_turn_ends(
    server, workspace, keep_screen
):
    server.add(Reply(content=prose(700), delay=0.04, chunk_size=5), text("second answer"))
    term = Terminal(server, workspace)
    term.send("talk\r")
    term.expect("word")
    term.send("and then the tests\r")
    term.send("half typed")
    term.wait_screen("⏎ queued: and then the tests")
    term.wait_screen("> half typed")
    keep_screen("a queued message", term)
    term.expect("second answer")
    term.ready()
    assert users_messages(server, 1) == ["talk", "and then the tests"]
    assert "› and then the tests" in term.scrollback()  # echoed as it was sent
    assert term.display()[-1].startswith("› half typed") or "› half typed" in term.display()
    term.send("\x15")
    term.exit()


def test_a_queued_message_is_taken_back_with_up_edited_or_dropped(server, workspace):
    server.add(Reply(content=prose(700), delay=0.04, chunk_size=5), text("after the edit"))
    term = Terminal(server, workspace)
    term.send("talk\r")
    term.expect("word")
    term.send("first thought\r")
    term.wait_screen("queued: first thought")
    term.send("doomed\r")
    term.wait_screen("queued: doomed")
    term.send("\x1b[A")  # Up: the last queued message back on the input line
    term.wait_screen("> doomed")
    term.send("\x15")  # Ctrl-U drops it
    term.send("\x1b[A")
    term.wait_screen("> first thought")
    term.send(", edited\r")
    term.wait_screen("queued: first thought, edited")
    term.expect("after the edit")
    term.ready()
    assert users_messages(server, 1) == ["talk", "first thought, edited"]
    term.exit()


def test_a_stopped_turn_sends_nothing_after_it_and_gives_the_queue_back_to_edit(server, workspace):
    server.add(Reply(content=prose(2_000), delay=0.05, chunk_size=5))
    term = Terminal(server, workspace)
    term.send("talk\r")
    term.expect("word")
    term.send("next one\r")
    term.wait_screen("queued: next one")
    term.send("\x1b")  # Esc still stops the turn
    term.expect("interrupted")
    term.expect("queued message")
    term.ready()
    assert len(server.chat_requests()) == 1
    assert "› next one" in term.display()
    term.send("\x15")
    term.exit()


def test_ctrl_c_twice_at_an_empty_prompt_exits_after_a_hint(server, workspace):
    term = Terminal(server, workspace)
    term.send("\x03")
    term.expect("press Ctrl-C again to exit")
    term.ready()
    time.sleep(1.2)  # too slow for a double press: a hint again
    term.send("\x03")
    term.expect("press Ctrl-C again to exit")
    term.ready()
    term.send("\x03")
    term.child.expect(pexpect.EOF)
    term.child.close()
    assert term.child.exitstatus == 0


def test_ctrl_c_on_a_typed_line_clears_it_and_does_not_count_toward_leaving(server, workspace):
    term = Terminal(server, workspace)
    term.send("half")
    term.wait_screen("› half")
    term.send("\x03")
    term.ready()
    term.settle()  # the next prompt drawn whole: a key sent while it is still being set up may go to the old one
    term.send("\x03")  # the first on an empty prompt: a hint, not an exit
    term.expect("press Ctrl-C again")
    term.ready()
    assert term.child.isalive()
    term.exit()


def test_quit_and_bare_exit_or_quit_leave_without_a_request(server, workspace):
    for word in ("/quit", "exit", "quit"):
        term = Terminal(server, workspace)
        term.send(word + "\r")
        term.child.expect(pexpect.EOF)
        term.child.close()
        assert term.child.exitstatus == 0, word
    assert server.chat_requests() == []


def test_typing_a_slash_opens_a_menu_of_commands_with_what_each_does(server, workspace, keep_screen):
    term = Terminal(server, workspace)
    term.send("/")
    term.wait_screen("/clear")
    term.settle()
    keep_screen("the / menu, as you type", term)
    screen = term.display()
    assert any("/clear" in line and "start a new session" in line for line in screen)
    term.send("co")
    term.wait_screen("summarise the conversation now")
    term.settle()  # the whole menu, not only the line that showed first
    assert any("/context" in line and "part by part" in line for line in term.display())
    term.send("\x15")
    term.exit()


def test_a_long_paste_shows_collapsed_and_is_sent_whole(server, workspace, keep_screen):
    server.add(text("Read all 300."))
    pasted = "\n".join(f"log line {i}" for i in range(300))
    term = Terminal(server, workspace)
    term.send("explain this: " + PASTE_START + pasted + PASTE_END)
    term.wait_screen("› explain this: [Pasted text #1 +300 lines]")
    term.send("\r")
    term.expect("Read all 300")
    term.ready()
    term.settle()
    keep_screen("a 300-line paste, sent", term)
    assert users_messages(server)[-1] == "explain this: " + pasted
    assert not any("log line 150" in line for line in term.scrollback())
    term.exit()


def test_a_short_paste_is_inserted_as_it_is(server, workspace):
    server.add(text("ok"))
    term = Terminal(server, workspace)
    term.send(PASTE_START + "two\nlines" + PASTE_END + "\r")
    term.expect("ok")
    term.ready()
    assert users_messages(server)[-1] == "two\nlines"
    term.exit()
