"""A streamed answer in a real pty, as the screen and its scrollback show it (pyte)."""

from collections import Counter

import pytest

from tests.support.scripted_server import Reply
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]


def long_answer() -> tuple[str, list[str]]:
    """~200 lines of Markdown (heading, paragraphs, a list, a code block) and a marker per line."""
    source, markers = ["# Release report", ""], []
    for i in range(40):
        source += [f"Paragraph {i:02d}: the quick brown fox jumps over the lazy dog.", ""]
        markers.append(f"Paragraph {i:02d}:")
    source += [f"- item {i:03d} of the list" for i in range(64)] + [""]
    markers += [f"item {i:03d} of the list" for i in range(64)]
    source += ["```python"] + [f"print('line {i:03d}')" for i in range(50)] + ["```", "", "The end of the report."]
    markers += [f"print('line {i:03d}')" for i in range(50)] + ["The end of the report."]
    return "\n".join(source), markers


def test_a_200_line_answer_in_a_30_row_terminal_appears_once_in_the_scrollback(server, workspace):
    answer, markers = long_answer()
    assert answer.count("\n") >= 199
    server.add(Reply(content=answer, chunk_size=7, delay=0.002))
    term = Terminal(server, workspace, rows=30, cols=100)
    term.send("write the report\r")
    term.expect("session ")  # the status line after the turn
    term.ready()
    lines = term.scrollback()
    counts = Counter(marker for line in lines for marker in markers if marker in line)
    assert {m: counts[m] for m in markers if counts[m] != 1} == {}
    repeated = {line: n for line, n in Counter(lines).items() if n > 1 and line.strip()}
    assert repeated == {}
    rendered = "\n".join(lines)
    assert "# Release report" not in rendered and "Release report" in rendered  # a heading, not its source
    assert "```" not in rendered and "• item 000 of the list" in rendered
    assert term.exit() == 0


def test_control_sequences_in_an_answer_are_shown_not_executed(server, workspace):
    server.add(Reply(content="Title\x1b]0;pwned\x07 then \x1b[2J\x1b[H clear, \x9b31m and \u202eevil", chunk_size=4))
    term = Terminal(server, workspace)
    term.send("hi\r")
    term.expect("session ")
    term.ready()
    assert term.screen.title == ""
    screen = "\n".join(term.display())
    assert "NanoHermes ·" in screen  # the banner was not cleared away
    assert "Title␛]0;pwned␇ then ␛[2J␛[H clear, <U+009B>31m and <U+202E>evil" in screen
    term.exit()
