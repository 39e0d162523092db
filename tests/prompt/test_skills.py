from pathlib import Path

import pytest

from nanohermes.prompt.frontmatter import parse_front_matter
from nanohermes.prompt.skills import (
    LISTING_HEADER,
    MAX_BODY_CHARS,
    MAX_DESCRIPTION_CHARS,
    discover_skills,
)
from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.files import read_file
from nanohermes.tools.knowledge import KNOWLEDGE_TOOLS

TOOLS = {t.name: t for t in KNOWLEDGE_TOOLS}


def write_skill(root: Path, dirname: str, name: str | None, description: str, body: str) -> Path:
    path = root / dirname / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = (f"name: {name}\n" if name else "") + f"description: {description}\n"
    path.write_text(f"---\n{meta}---\n{body}\n", encoding="utf-8")
    return path


def global_dir(home: Path) -> Path:
    return home / "skills"


def workspace_dir(workspace: Path) -> Path:
    return workspace / ".nanohermes" / "skills"


def call_skill(workspace, home, name):
    skills, _ = discover_skills(home, workspace)
    ctx = ToolContext(workspace=workspace, home=home, skills=skills)
    return dispatch(ctx, TOOLS, "skill", {"name": name})


# ---- front matter (pure) ---------------------------------------------------------------------


def test_front_matter_keys_quotes_and_body():
    meta, body = parse_front_matter(
        '---\nname: "release"\nDescription: cut a release: tag, push\n# note\n---\n\nStep 1\n'
    )
    assert meta == {"name": "release", "description": "cut a release: tag, push"}
    assert body == "Step 1"


@pytest.mark.parametrize("text", ["no front matter\nat all", "---\nname: x\nnever closed"])
def test_text_without_closed_front_matter_is_all_body(text):
    assert parse_front_matter(text) == ({}, text.strip())


# ---- discovery and listing -------------------------------------------------------------------


def test_listing_is_one_line_per_skill_under_a_header(workspace, isolated_home):
    write_skill(global_dir(isolated_home), "review", "review", "review a diff", "r")
    write_skill(workspace_dir(workspace), "deploy", "deploy", "ship to prod", "d")
    skills, warnings = discover_skills(isolated_home, workspace)
    assert warnings == []
    assert skills.listing() == f"{LISTING_HEADER}\n- deploy: ship to prod\n- review: review a diff"
    assert "skill tool" in LISTING_HEADER


def test_workspace_skill_wins_on_a_name_clash(workspace, isolated_home):
    write_skill(global_dir(isolated_home), "fmt", "fmt", "global formatter", "GLOBAL BODY")
    write_skill(workspace_dir(workspace), "fmt", "fmt", "project formatter", "PROJECT BODY")
    skills, _ = discover_skills(isolated_home, workspace)
    assert skills.listing().count("fmt") == 1 and "project formatter" in skills.listing()
    assert "PROJECT BODY" in call_skill(workspace, isolated_home, "fmt").content


def test_directory_names_a_skill_without_a_name_key(workspace, isolated_home):
    write_skill(workspace_dir(workspace), "lint", None, "run the linters", "x")
    skills, _ = discover_skills(isolated_home, workspace)
    assert skills.names() == ["lint"]


def test_no_skills_no_listing(workspace, isolated_home):
    skills, warnings = discover_skills(isolated_home, workspace)
    assert (len(skills), skills.listing(), warnings) == (0, "", [])


def test_long_description_is_cut_in_the_listing(workspace, isolated_home):
    write_skill(workspace_dir(workspace), "wordy", "wordy", "w" * 1000, "x")
    line = discover_skills(isolated_home, workspace)[0].listing().splitlines()[1]
    assert len(line) == len("- wordy: ") + MAX_DESCRIPTION_CHARS and line.endswith("…")


def test_non_utf8_skill_is_skipped_with_a_warning(workspace, isolated_home):
    bad = workspace_dir(workspace) / "bad" / "SKILL.md"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"---\nname: bad\ndescription: caf\xe9\n---\n")
    write_skill(workspace_dir(workspace), "good", "good", "fine", "x")
    skills, warnings = discover_skills(isolated_home, workspace)
    assert skills.names() == ["good"]
    assert len(warnings) == 1 and str(bad) in warnings[0]


# ---- the skill tool --------------------------------------------------------------------------


def test_skill_tool_returns_the_body_without_front_matter(workspace, isolated_home):
    write_skill(workspace_dir(workspace), "deploy", "deploy", "ship", "1. build\n2. push")
    result = call_skill(workspace, isolated_home, "deploy")
    assert result.ok and result.content.endswith("1. build\n2. push")
    assert "description:" not in result.content


def test_skill_name_matches_case_insensitively(workspace, isolated_home):
    write_skill(workspace_dir(workspace), "deploy", "Deploy", "ship", "BODY")
    assert "BODY" in call_skill(workspace, isolated_home, "deploy").content


def test_skill_body_at_the_cap_is_whole_and_over_it_is_cut_with_a_note(workspace, isolated_home):
    write_skill(workspace_dir(workspace), "exact", "exact", "d", "e" * MAX_BODY_CHARS)
    write_skill(workspace_dir(workspace), "over", "over", "d", "o" * (MAX_BODY_CHARS + 7))
    skills, _ = discover_skills(isolated_home, workspace)
    exact, over = skills.body(skills.get("exact")), skills.body(skills.get("over"))
    assert exact == "e" * MAX_BODY_CHARS
    assert over.startswith("o" * MAX_BODY_CHARS + "\n… skill truncated (7 more chars in ")


def test_unknown_skill_lists_what_exists(workspace, isolated_home):
    write_skill(workspace_dir(workspace), "deploy", "deploy", "ship", "x")
    write_skill(global_dir(isolated_home), "review", "review", "look", "x")
    result = call_skill(workspace, isolated_home, "deploy-prod")
    assert not result.ok
    assert "no skill named 'deploy-prod'" in result.content and "deploy, review" in result.content


def test_unknown_skill_with_none_installed_says_so(workspace, isolated_home):
    result = call_skill(workspace, isolated_home, "anything")
    assert not result.ok and "none are installed" in result.content


def test_skill_edited_after_start_is_read_fresh(workspace, isolated_home):
    path = write_skill(workspace_dir(workspace), "deploy", "deploy", "ship", "OLD")
    skills, _ = discover_skills(isolated_home, workspace)
    path.write_text("---\nname: deploy\ndescription: ship\n---\nNEW\n")
    assert skills.body(skills.get("deploy")) == "NEW"


def test_knowledge_tool_schemas_are_short():
    for t in KNOWLEDGE_TOOLS:
        assert t.description.count(".") == 1 and len(t.description) < 80


def test_read_file_reads_the_files_a_skill_names_in_its_own_folder_and_nothing_past_it(
    workspace, isolated_home, tmp_path, monkeypatch
):
    """Anthropic's skills name files beside SKILL.md (`forms.md`, `scripts/…`); installed in the
    user's folders they lie outside the workspace, and read_file still reads them — only them."""
    claude = isolated_home / "claude-home" / "skills"
    write_skill(claude, "pdf", "pdf", "PDF work", "For forms, read forms.md.")
    (claude / "pdf" / "forms.md").write_text("fill forms like this\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("not the skill's")
    (claude / "pdf" / "escape.md").symlink_to(secret)
    state_skill = write_skill(global_dir(isolated_home), "notes", "notes", "notes", "see extra.md")
    (state_skill.parent / "extra.md").write_text("extra notes\n")
    skills, _ = discover_skills(isolated_home, workspace)
    ctx = ToolContext(workspace=workspace, home=isolated_home, skills=skills)
    loaded = dispatch(ctx, {**TOOLS, "read_file": read_file}, "skill", {"name": "pdf"})
    assert f"read_file reads the files it names under {claude / 'pdf'}/" in loaded.content
    read = lambda path: dispatch(ctx, {"read_file": read_file}, "read_file", {"path": str(path)})  # noqa: E731
    assert "fill forms like this" in read(claude / "pdf" / "forms.md").content
    assert "extra notes" in read(state_skill.parent / "extra.md").content  # a skill in the state directory too
    refused = read(claude / "pdf" / "escape.md")
    assert not refused.ok and "not the skill's" not in refused.content
    assert not read(claude / "other.md").ok and not read(isolated_home / "config.toml").ok
