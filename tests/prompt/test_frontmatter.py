"""Front matter as people write it: YAML block scalars, quotes, unknown keys, Claude Code's lenient
lines, and a broken block named with its reason; skills read from Claude Code's directories too."""

import re

import pytest

from nanohermes.prompt.frontmatter import FrontMatterError, parse_front_matter, text_value
from nanohermes.prompt.skills import DEFAULT_LISTING_CHARS, LISTING_HEADER, NAMES_ONLY, discover_skills

# The shape of Anthropic's own SKILL.md files: a `|-` block description over several lines, a
# license key and metadata NanoHermes does not know.
ANTHROPIC_STYLE = """---
name: pdf-tools
description: |-
  Extract text and tables from PDF files, fill forms, merge documents.
  Use when the user works with .pdf files or asks for a form to be filled.
license: Complete terms in LICENSE.txt
metadata:
  version: "1.2"
  owners: [docs-team]
---
# PDF tools

Step one.
"""


def test_a_block_description_over_several_lines_is_one_line_of_text_and_unknown_keys_are_ignored():
    meta, body = parse_front_matter(ANTHROPIC_STYLE)
    assert text_value(meta, "description") == (
        "Extract text and tables from PDF files, fill forms, merge documents. "
        "Use when the user works with .pdf files or asks for a form to be filled."
    )
    assert text_value(meta, "name") == "pdf-tools" and body.startswith("# PDF tools")


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ("description: >\n  folded\n  lines\n", "folded lines"),
        ('description: "quoted: with a colon # and hash"\n', "quoted: with a colon # and hash"),
        ("description: 'single ''quoted'''\n", "single 'quoted'"),
        ("Description: cut a release: tag, push\n# a comment\n", "cut a release: tag, push"),  # Claude Code reads it
        ("description: 42\n", "42"),
        ("description:\n", ""),
    ],
)
def test_yaml_values_as_written(block, expected):
    meta, _ = parse_front_matter(f"---\n{block}---\nbody")
    assert text_value(meta, "description") == expected


def test_claude_codes_lenient_argument_hint_is_read_as_the_text_it_means():
    meta, _ = parse_front_matter("---\nargument-hint: [pr-number] [priority]\ndescription: Fix: an issue\n---\nx")
    assert meta["argument-hint"] == "[pr-number] [priority]" and meta["description"] == "Fix: an issue"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\nname: x\n  description: y\n---\nbody", "mapping values are not allowed here (line 3)"),
        ("---\n- a\n- b\n---\nbody", "a list, not `key: value` lines"),
        ('---\nname: "never closed\n---\nbody', "(line 2)"),
    ],
)
def test_a_broken_block_raises_with_its_reason(text, reason):
    with pytest.raises(FrontMatterError, match=re.escape(reason)):
        parse_front_matter(text)


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_skills_from_claude_codes_directories_and_a_broken_one_named_with_its_reason(
    workspace, isolated_home, monkeypatch
):
    claude = isolated_home / "claude-home"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    write(claude / "skills" / "pdf-tools" / "SKILL.md", ANTHROPIC_STYLE)
    write(workspace / ".claude" / "skills" / "deploy" / "SKILL.md", "---\ndescription: ship it\n---\nsteps")
    broken = write(workspace / ".claude" / "skills" / "bad" / "SKILL.md", '---\nname: "bad\n---\nx')
    skills, warnings = discover_skills(isolated_home, workspace)
    assert skills.names() == ["deploy", "pdf-tools"]
    assert "- pdf-tools: Extract text and tables from PDF files, fill forms" in skills.listing()
    assert len(warnings) == 1 and str(broken) in warnings[0] and "not valid YAML" in warnings[0]
    assert skills.body(skills.get("pdf-tools")) == "# PDF tools\n\nStep one."


def test_the_listing_names_every_skill_within_its_budget_with_many_skills(workspace, isolated_home):
    for i in range(60):
        write(isolated_home / "skills" / f"s{i:02}" / "SKILL.md", f"---\ndescription: {'word ' * 40}\n---\nx")
    listing = discover_skills(isolated_home, workspace)[0].listing()
    lines = listing.splitlines()
    assert lines[0] == LISTING_HEADER and [line.split(":")[0] for line in lines[1:61]] == [
        f"- s{i:02}" for i in range(60)
    ]
    assert len(listing) <= DEFAULT_LISTING_CHARS + len(NAMES_ONLY) + 1
    assert lines[-1] == NAMES_ONLY  # 60 shares of what the names leave would each say nothing
