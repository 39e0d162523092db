"""The pure parts of the REPL's screen: block boundaries, neutralised text, tool lines,
answers to a question, the status line, /context's rows."""

import pytest

from nanohermes import events as ev
from nanohermes.calls import ResultFacts
from nanohermes.loop.approvals import Decision
from nanohermes.ui.approval import parse_answer
from nanohermes.ui.context_view import PARTS, render_context
from nanohermes.ui.escape import neutralize
from nanohermes.ui.mdstream import stable_end
from nanohermes.ui.toolview import output_tail, plain, result_line
from nanohermes.ui.usage_view import SessionTotals, turn_line


@pytest.mark.parametrize(
    "text, stable",
    [
        ("para one\n\npara two", "para one\n\n"),
        ("para one\nstill one\n", ""),
        ("1. item\n\n   continued\n\n2. next", "1. item\n\n   continued\n\n"),
        ("```\ncode\n\nmore code\n", ""),  # a blank line inside an open fence ends nothing
        ("```\ncode\n```\nafter", "```\ncode\n```\n"),
        ("~~~~\n```\nstill code\n~~~~\n\nx", "~~~~\n```\nstill code\n~~~~\n\n"),
    ],
)
def test_only_complete_blocks_are_stable(text, stable):
    assert text[: stable_end(text)] == stable


def test_control_characters_become_visible_and_newlines_stay():
    assert neutralize("a\x1b[2Jb\x07\r\n\tc\x9b\u202e") == "a␛[2Jb␇␍\n\tc<U+009B><U+202E>"


def finished(ok=True, **facts):
    return ev.ToolFinished("c1", "run_command", "$ pytest", ok, 1.25, ResultFacts(**facts))


def test_a_non_zero_exit_is_a_cross_with_the_status_and_the_tail_collapsed():
    event = finished(exit_code=1, tail="a\nb\nc\nd\n1 failed", output_lines=40)
    assert plain(result_line(event, '{"command": "pytest -q"}')) == "✗ run_command command=pytest -q · exit 1 · 1.2s"
    assert [plain(line) for line in output_tail(event)] == [
        "  … 35 more lines",
        "  │ a",
        "  │ b",
        "  │ c",
        "  │ d",
        "  │ 1 failed",
    ]


def test_a_killed_command_says_by_which_signal():
    assert "killed by SIGKILL" in plain(result_line(finished(exit_code=-9), '{"command": "x"}'))


def test_tool_output_in_a_tail_is_neutralised():
    event = finished(exit_code=0, tail="\x1b]0;title\x07done", output_lines=1)
    assert plain(output_tail(event)[0]) == "  │ ␛]0;title␇done"


@pytest.mark.parametrize(
    "typed, decision",
    [
        ("y", Decision("yes")),
        ("A", Decision("always")),
        ("no", Decision("no")),
        ("n: use make clean", Decision("no", "use make clean")),
        ("use make clean instead", Decision("no", "use make clean instead")),
        ("   ", None),
    ],
)
def test_answers_to_an_approval_question(typed, decision):
    assert parse_answer(typed) == decision


def test_the_status_line_without_a_known_window_says_the_budget_share():
    usage = ev.Usage(1_756, 257, 3)
    totals = SessionTotals()
    totals.add(usage)
    line = turn_line(usage, window=None, budget_share=0.34, seconds=4.2, totals=totals)
    assert line == (
        "1,756 in · 257 out · 3 requests · context 34% full · cost unknown · 4.2s · "
        "session 1,756 in / 257 out / cost unknown"
    )


def test_the_status_line_says_when_the_server_reported_no_usage():
    line = turn_line(
        ev.Usage(0, 0, 2, reported=False), window=None, budget_share=None, seconds=1, totals=SessionTotals()
    )
    assert line.startswith("2 requests · the server reported no token usage · 1.0s")
    some = turn_line(
        ev.Usage(900, 40, 3, unreported=1), window=None, budget_share=None, seconds=1, totals=SessionTotals()
    )
    assert some.startswith("900 in · 40 out · 3 requests · 1 without a usage report · cost unknown · 1.0s")


def test_context_rows_fit_60_columns_and_name_every_part():
    parts = {name: 1_000 * (i + 1) for i, name in enumerate(PARTS)}
    tokens = {name: chars // 3 for name, chars in parts.items()}
    lines = [
        plain(line) for line in render_context(parts, tokens, 40_000, "the 40,000-token window", width=60, colour=False)
    ]
    assert all(len(line) <= 60 for line in lines)
    assert [line[3:].split("  ")[0] for line in lines[1 : 1 + len(PARTS)]] == list(PARTS)
    assert lines[1].startswith("RR built-in rules") and lines[-1].startswith("[RG")


def test_version_imports_neither_rich_nor_prompt_toolkit():
    import subprocess
    import sys

    code = (
        "import sys; sys.argv=['nanohermes','--version']\nfrom nanohermes.cli import main\ntry: main()\n"
        "except SystemExit: pass\nprint(sorted(m for m in ('rich', 'prompt_toolkit', 'pyte') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split("\n")
    assert out[:2] == ["nanohermes 0.1.0", "[]"]
