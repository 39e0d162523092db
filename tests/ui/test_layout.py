"""What the screen shows at any width: text wrapped on words, no stale line after a resize, code
that copies clean, and the words a user sees — on an emulated screen, and pure where it is pure."""

import re

import pytest

from nanohermes.ui.commands import COMMANDS
from nanohermes.ui.progress import rows_after_resize
from nanohermes.ui.session_commands import KEYS, help_lines
from tests.support.scripted_server import Reply, call, prose, text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

WORD = re.compile(r"word\d+")


def broken_words(lines: list[str], text_words: set[str]) -> list[str]:
    """Pieces of `text_words` a line starts or ends with that are not whole words."""
    broken = []
    for line in lines:
        words = line.split()
        for piece in words[:1] + words[-1:]:
            bare = piece.strip(".,;:()[]·")
            if bare and bare not in text_words and any(bare in word and bare != word for word in text_words):
                broken.append(bare)
    return broken


@pytest.mark.parametrize("width", [40, 60, 100])
def test_help_wraps_every_description_on_words_within_the_width(width):
    lines = help_lines(list(COMMANDS.values()), width)
    assert all(len(line) < width for line in lines)
    words = {w.strip(".,;:()[]·") for c in COMMANDS.values() for w in c.help.split() + KEYS.split()}
    assert broken_words(lines, words) == []
    joined = " ".join(" ".join(lines).split())
    assert all(" ".join(c.help.split()) in joined or width < 60 for c in COMMANDS.values())


def test_help_at_60_columns_on_screen_breaks_no_word(server, workspace):
    term = Terminal(server, workspace, cols=60, rows=60)
    term.send("/help\r")
    term.expect("Ctrl-D")
    term.ready()
    screen = term.scrollback()
    words = {w.strip(".,;:()[]·") for c in COMMANDS.values() for w in c.help.split() + KEYS.split()}
    start = next(i for i, line in enumerate(screen) if line.startswith("  /help"))
    assert broken_words(screen[start:], words) == [] and all(len(line) < 60 for line in screen[start:])
    assert "summarise the conversation now" in " ".join(" ".join(screen[start:]).split())
    term.exit()


def test_the_approval_question_wraps_on_words_at_60_columns(server, workspace):
    server.add(call("run_command", {"command": "echo one"}), text("done"))
    term = Terminal(server, workspace, "--mode", "ask", "--sandbox", "off", cols=60)
    term.send("go\r")
    term.expect("instead")
    term.settle()
    screen = term.display()
    at = next(i for i, line in enumerate(screen) if line.startswith("allow?"))
    question = screen[at : at + 3]
    assert question[0].endswith("[y]es · [s]ession · [a]lways: run_command") or "[y]es" in question[0]
    words = {"allow?", "[y]es", "[s]ession", "[a]lways", "run_command", "echo", "[n]o", "instead", "what", "say"}
    assert broken_words(question, {w.strip(".,;:()[]·") for w in words}) == []
    assert all(len(line) < 60 for line in question)
    term.send("y\r")
    term.expect("done")
    term.ready()
    term.exit()


def test_rows_a_drawing_takes_after_a_narrowing_resize_count_each_line_rewrapped():
    assert rows_after_resize([100, 40, 0], 100, 60) == 2 + 1 + 1
    assert rows_after_resize([100, 40], 100, 120) == 2  # wider: each line still one row
    assert rows_after_resize([60, 61], 100, 60) == 1 + 2


def test_no_stale_line_after_a_resize_mid_answer(server, workspace):
    answer = "\n\n".join(prose(900, "word")[i * 300 : (i + 1) * 300] for i in range(3))  # long paragraphs, streamed
    server.add(Reply(content=answer, delay=0.03, chunk_size=6))
    term = Terminal(server, workspace, cols=100, size_in_env=False)
    term.send("explain\r")
    term.wait_screen("word30")  # the first paragraph's unfinished lines are in the live area
    term.resize(30, 60)
    term.expect("session ")
    term.ready()
    seen = [w for line in term.scrollback() for w in WORD.findall(line)]
    repeated = sorted({w for w in seen if seen.count(w) > 1})
    assert repeated == [], "a line was left behind:\n" + "\n".join(term.scrollback())
    assert all(len(line) <= 60 for line in term.display())
    term.exit()


def test_code_blocks_are_written_without_padding_so_they_copy_clean(server, workspace):
    server.add(text("Here:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\nDone."))
    term = Terminal(server, workspace, colour=True)
    raw = []
    term.child.logfile_read = _Tee(term.child.logfile_read, raw)
    term.send("show code\r")
    term.expect("Done")
    term.ready()
    screen = term.display()
    assert "def add(a, b):" in screen and "    return a + b" in screen  # no leading space added
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", "".join(raw))
    code_lines = [line for line in plain.replace("\r", "").split("\n") if "add(a, b)" in line or "return a" in line]
    assert code_lines and all(not line.endswith(" ") for line in code_lines)
    term.exit()


class _Tee:
    """pexpect's logfile_read: to the emulator, and kept."""

    def __init__(self, inner, kept: list):
        self.inner, self.kept = inner, kept

    def write(self, data: str) -> None:
        self.kept.append(data)
        self.inner.write(data)

    def flush(self) -> None:
        pass


def test_the_words_a_user_sees_name_what_they_see():
    from nanohermes.context.engine import ContextEngine
    from tests.context.test_parts import stub_summarizer, tool_history

    _, report = ContextEngine(high_water_chars=30_000).fit(tool_history(20, 3_000), stub_summarizer())
    _, forced = ContextEngine(high_water_chars=30_000).fit(tool_history(20, 3_000), stub_summarizer(), force=True)
    for line in (report.one_line(), forced.one_line()):
        assert "budget" not in line and "placeholders" not in line and "forced" not in line
    assert report.one_line().startswith("context compacted automatically")
    assert forced.one_line().startswith("context compacted on request") and "summarised" in forced.one_line()
