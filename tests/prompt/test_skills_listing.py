"""Issue 45, item 2: with a 1,500-character listing, 11 of Anthropic's 17 published skills sat behind
"… 11 more skills" and a model asked for a PDF never learned a `pdf` skill exists. Every skill is
named; the descriptions share a budget that follows the model's window; a broken SKILL.md is named."""

from __future__ import annotations

import pytest

from nanohermes.configure import load_config
from nanohermes.prompt.skills import (
    DEFAULT_LISTING_CHARS,
    MAX_LISTING_CHARS,
    NAMES_ONLY,
    discover_skills,
    listing_budget,
)
from nanohermes.runtime import build_runtime
from tests.support.scripted_server import ScriptedServer, text

# Anthropic's published skills (github.com/anthropics/skills), by name.
ANTHROPIC = (
    "algorithmic-art brand-guidelines canvas-design doc-coauthoring docx frontend-design internal-comms mcp-builder "
    "pdf pptx skill-creator slack-gif-creator template-skill theme-factory web-artifacts-builder webapp-testing xlsx"
).split()


def install(root, names=ANTHROPIC) -> None:
    for name in names:
        path = root / name / "SKILL.md"
        path.parent.mkdir(parents=True)
        about = f"Use when the user asks for {name} work: " + "what it does, when to use it, the files it makes. " * 3
        path.write_text(f"---\nname: {name}\ndescription: {about}\n---\n# {name}\n\nSteps.")


@pytest.fixture
def anthropic_skills(isolated_home, monkeypatch):
    claude = isolated_home / "claude-home"
    install(claude / "skills")
    return claude


def listed(listing: str) -> list[str]:
    return [line[2:].split(":")[0] for line in listing.splitlines()[1:] if line.startswith("- ")]


@pytest.mark.parametrize("window", [None, 8_192, 32_768, 200_000])
def test_every_installed_skill_is_named_whatever_the_window(anthropic_skills, workspace, isolated_home, window):
    skills, warnings = discover_skills(isolated_home, workspace)
    listing = skills.listing(window)
    assert listed(listing) == sorted(ANTHROPIC) and warnings == []
    assert len(listing) <= max(listing_budget(window), len(listing.split(NAMES_ONLY)[0])) + len(NAMES_ONLY) + 1


def test_descriptions_are_cut_evenly_at_the_default_budget_and_whole_at_a_large_window(
    anthropic_skills, workspace, isolated_home
):
    skills, _ = discover_skills(isolated_home, workspace)
    cut = skills.listing(None).splitlines()[1:]
    assert len(skills.listing(None)) <= DEFAULT_LISTING_CHARS
    assert all(line.endswith("…") and ": Use when the user asks for" in line for line in cut)
    whole = skills.listing(200_000)
    assert (
        "- pdf: Use when the user asks for pdf work: what it does" in whole and "…" not in whole.split("- xlsx")[0][:50]
    )
    assert len(whole) <= MAX_LISTING_CHARS


def test_a_small_window_lists_names_only_and_says_so(anthropic_skills, workspace, isolated_home):
    listing = discover_skills(isolated_home, workspace)[0].listing(8_192)
    assert listing.splitlines()[-1] == NAMES_ONLY and "- pdf\n" in listing and "Use when" not in listing


def test_the_system_prompt_lists_the_skills_for_the_window_the_server_advertises(
    anthropic_skills, workspace, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    sent = {}
    for n_ctx in (8_192, 200_000):
        server = ScriptedServer(n_ctx=n_ctx)
        try:
            server.add(text("ok"), text("ok"))
            runtime = build_runtime(load_config(base_url=server.url, workspace=workspace), None, lambda e: None, None)
            try:
                runtime.agent.run_turn("make a pdf")
                runtime.agent.run_turn("and again")
            finally:
                runtime.close()
            first, second = (r["messages"][0]["content"] for r in server.chat_requests())
        finally:
            server.close()
        assert first == second  # learned before the first request: the prefix never changes after it
        sent[n_ctx] = first
    assert NAMES_ONLY in sent[8_192] and "- pdf\n" in sent[8_192]
    assert "- pdf: Use when the user asks for pdf work" in sent[200_000]


def test_a_broken_skill_is_named_in_a_warning(workspace, isolated_home):
    install(isolated_home / "skills", ["good"])
    broken = isolated_home / "skills" / "unclosed" / "SKILL.md"
    broken.parent.mkdir()
    broken.write_text("---\nname: unclosed\ndescription: never closed\n\nbody")
    skills, warnings = discover_skills(isolated_home, workspace)
    assert skills.names() == ["good"]
    assert warnings == [
        f"skipped skill {broken}: its front matter opens with --- and is never closed by another --- line"
    ]
