"""A write_file content wrapped in one Markdown fence is written without it (tools/fences.py),
on real files through the real tool; anything less plain is written as sent."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nanohermes.tools import ToolContext
from nanohermes.tools.fences import unfenced
from nanohermes.tools.files import write_file

CODE = "def abbreviate(words):\n    return ''.join(w[0] for w in words.split()).upper()\n"


@pytest.fixture
def ctx(workspace, isolated_home):
    return ToolContext(workspace=workspace, home=isolated_home)


def test_a_fenced_python_file_is_written_without_the_fence_and_the_result_says_so(ctx):
    out = str(write_file.func(ctx, path="acronym.py", content=f"```python\n{CODE}```"))
    assert (ctx.workspace / "acronym.py").read_text() == CODE
    assert "the Markdown fence around the content (```python … ```) was left out" in out
    assert "no longer parses" not in out


def test_a_markdown_file_keeps_its_fences(ctx):
    text = f"```python\n{CODE}```\n"
    out = str(write_file.func(ctx, path="README.md", content=text))
    assert (ctx.workspace / "README.md").read_text() == text and "fence" not in out


@pytest.mark.parametrize(
    "content",
    [
        CODE,  # no fence
        f"```python\n{CODE}",  # opened, never closed
        f"# a comment\n```python\n{CODE}```",  # text before the fence
        "```python\nx = 1\n```\n\n```python\ny = 2\n```",  # two blocks: not one wrapped block
        f"```python\n{CODE}~~~",  # closed by another kind of fence
    ],
)
def test_anything_but_one_wrapping_fence_is_written_as_sent(ctx, content):
    out = str(write_file.func(ctx, path="a.py", content=content))
    assert (ctx.workspace / "a.py").read_text() == content and "fence" not in out


line = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=30)


@settings(max_examples=30, deadline=None)
@given(st.lists(line, min_size=1, max_size=8), st.sampled_from(["", "python", "py"]))
def test_unwrapping_gives_back_exactly_the_lines_inside(lines, language):
    inner = "\n".join(lines) + "\n"
    content, note = unfenced("x.py", f"```{language}\n{inner}```")
    if any(line.lstrip().startswith(("```", "~~~")) for line in lines):
        assert content == f"```{language}\n{inner}```" and note == ""
    else:
        assert content == inner and note


@settings(max_examples=30, deadline=None)
@given(st.text(max_size=200))
def test_content_without_a_leading_fence_is_never_changed(text):
    if not text.strip("\n").lstrip().startswith(("```", "~~~")):
        assert unfenced("x.py", text) == (text, "")
