"""What the REPL says about tokens and the context, in a real pty."""

import re

import pytest

from nanohermes.ui.context_view import PARTS
from tests.support.scripted_server import Reply, ScriptedServer, call, prose, text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

USAGE = {"prompt_tokens": 1000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 800}}


def test_after_a_turn_one_line_says_tokens_window_cache_time_and_session_totals(workspace):
    server = ScriptedServer(n_ctx=16_384)  # advertised like llama.cpp: the window is known
    try:
        server.add(
            call("read_file", {"path": "a.txt"}, usage=USAGE), text("ok", usage=USAGE), text("again", usage=USAGE)
        )
        (workspace / "a.txt").write_text("x\n")
        term = Terminal(server, workspace, "--yes", cols=140)  # the default model, gpt-4o-mini, has a price
        term.send("read a\r")
        term.expect("session ")
        term.ready()
        line = next(line for line in term.display() if "session " in line and " in · " in line)
        assert re.fullmatch(
            r"2,000 in · 20 out · 2 requests · 6% of 16k window · 80% cached · \$0\.000192 · "
            r"\d+\.\ds · session 2,000 in / 20 out / \$0\.000192",
            line,
        ), line
        term.send("more\r")
        term.expect("session 3,000 in / 30 out")
        term.ready()
        term.exit()
    finally:
        server.close()


def test_right_after_ctrl_c_the_line_says_what_was_really_used(server, workspace):
    server.add(Reply(content=prose(2_000), delay=0.05, chunk_size=5))
    term = Terminal(server, workspace)
    term.send("talk\r")
    term.expect("word")
    term.child.sendintr()
    term.expect("interrupted")
    term.expect("session ")
    term.ready()
    line = next(line for line in term.scrollback() if "session ~" in line)
    assert re.match(r"~[\d,]+ in · ~[\d,]+ out · 1 request · ", line) and not line.startswith("~0 in")
    assert "estimated" in "\n".join(term.scrollback())
    term.exit()


def context_screen(server, workspace, cols: int) -> Terminal:
    (workspace / "notes.txt").write_text("hello\n" * 300)
    server.add(call("read_file", {"path": "notes.txt"}), text("Read it."))
    term = Terminal(server, workspace, "--yes", rows=40, cols=cols, colour=True)
    term.send("/memory add fact: the notes file says hello\r")
    term.expect("added")
    term.ready()
    term.send("read the notes file\r")
    term.expect("session ")
    term.ready()
    term.send("/context\r")
    term.expect("of the context limit")
    term.ready()
    return term


def _check_context_screen(term: Terminal, cols: int) -> None:
    screen = term.display()
    header = next((i for i, line in enumerate(screen) if line.startswith("   part") and "tokens" in line), None)
    assert header is not None, "\n".join(screen)
    rows = screen[header + 1 : header + 1 + len(PARTS)]
    assert [row[3:].split("  ")[0] for row in rows] == list(PARTS)  # a row for every part, memory included, in order
    assert all(row.startswith("██ ") and len(row) <= cols for row in rows)
    assert int(rows[3].split()[3].replace(",", "")) > 0  # the memory block holds the entry
    colours = [term.colours_on_line(row) - {"default"} for row in rows]
    assert all(len(c) == 1 for c in colours) and len({c.pop() for c in colours}) == len(PARTS)
    bar = screen[header + len(PARTS) + 3]
    assert bar.startswith("[█") and bar.endswith("]") and len(bar) <= cols
    assert re.match(r"   \d+% of the context limit: 120,000 chars ≈ [\d,]+ tokens", screen[header + len(PARTS) + 2])


def test_context_is_readable_at_60_columns(server, workspace):
    term = context_screen(server, workspace, 60)
    _check_context_screen(term, 60)
    term.exit()


def test_context_at_120_columns(server, workspace):
    term = context_screen(server, workspace, 120)
    _check_context_screen(term, 120)
    term.exit()


def test_compact_with_nothing_to_do_is_one_line(server, workspace):
    server.add(text("hi"))
    term = Terminal(server, workspace)
    term.send("hello\r")
    term.expect("session ")
    term.ready()
    term.send("/compact\r")
    term.expect("nothing to")
    term.ready()
    screen = term.display()
    at = next(i for i, line in enumerate(screen) if line == "› /compact")
    assert screen[at + 1].startswith("· ") and "nothing to" in screen[at + 1] and screen[at + 2].startswith("›")
    term.exit()
