"""Issue 44, items 1 and 2: a cloned repository's symlinks sent credentials to the model
(`.claude/commands/review.md -> ~/.aws/credentials`, `.nanohermes/skills/deploy/SKILL.md ->
~/.ssh/id_rsa`) and /init wrote through a dangling AGENTS.md link to outside the workspace. Every
file NanoHermes reads for the repository passes one rule (repo_files.py); the links are planted for
real, in a home directory of the test's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nanohermes.cli import app
from nanohermes.configure import load_config
from nanohermes.prompt import gather_prompt_inputs
from nanohermes.prompt.commands import discover_commands
from nanohermes.prompt.mentions import attachment
from nanohermes.prompt.skills import discover_skills
from nanohermes.repo_files import USER, Boundary, RefusedFile
from nanohermes.tools import ToolContext
from tests.support.scripted_server import text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]

AWS_SECRET = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SSH_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"


@pytest.fixture
def user_home(tmp_path, monkeypatch) -> Path:
    """$HOME with credentials where the sandbox hides them."""
    home = tmp_path / "user"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(AWS_SECRET + "\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text(SSH_KEY)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return home


def plant(link: Path, target: Path) -> Path:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return link


def one_shot(server, workspace, task: str, *args):
    r = CliRunner().invoke(app, ["-p", task, "--base-url", server.url, "-C", str(workspace), *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r


def test_a_repository_command_linked_to_aws_credentials_is_refused_and_never_sent(server, workspace, user_home):
    plant(workspace / ".claude" / "commands" / "review.md", user_home / ".aws" / "credentials")
    server.add(text("ok"))
    r = one_shot(server, workspace, "/review")
    assert r.exit_code == 0, r.stderr
    assert "wJalrXUtnFEMI" not in json.dumps(server.chat_requests())
    assert "review.md: refused" in r.stderr and "~/.aws/credentials, a hidden path" in r.stderr


def test_a_repository_skill_linked_to_an_ssh_key_is_skipped_with_a_warning(server, workspace, user_home):
    plant(workspace / ".nanohermes" / "skills" / "deploy" / "SKILL.md", user_home / ".ssh" / "id_rsa")
    server.add(text("ok"))
    r = one_shot(server, workspace, "hi")
    assert r.exit_code == 0, r.stderr
    system = server.chat_requests()[0]["messages"][0]["content"]
    assert "OPENSSH" not in system and "deploy" not in system
    assert "skipped skill" in r.stderr and "~/.ssh/id_rsa, a hidden path" in r.stderr


def test_repository_files_linked_out_of_the_workspace_are_refused(tmp_path, workspace, isolated_home, user_home):
    outside = tmp_path / "elsewhere"
    (outside / "ext").mkdir(parents=True)
    (outside / "notes.txt").write_text("OUTSIDE-NOTES")
    (outside / "ext" / "SKILL.md").write_text("---\ndescription: OUTSIDE-SKILL\n---\nbody")
    plant(workspace / "AGENTS.md", outside / "notes.txt")
    plant(workspace / "NANOHERMES.md", outside / "notes.txt")
    plant(workspace / ".claude" / "skills" / "ext", outside / "ext")  # a directory link
    plant(workspace / ".nanohermes" / "commands" / "x.md", outside / "notes.txt")
    inputs, warnings = gather_prompt_inputs(load_config(workspace=workspace))
    assert "OUTSIDE" not in inputs.project_guidance + inputs.nanohermes_md + inputs.skills_listing
    commands, command_warnings = discover_commands(isolated_home, workspace)
    assert "x" not in commands
    said = "\n".join(warnings + command_warnings)
    assert said.count(f"{outside / 'notes.txt'}, outside {workspace.resolve()}") == 3
    assert f"is a symlink to {outside / 'ext' / 'SKILL.md'}, outside" in said


def test_the_users_own_files_may_live_anywhere_but_never_link_into_a_hidden_path(workspace, isolated_home, user_home):
    (user_home / "dotfiles").mkdir()
    (user_home / "dotfiles" / "mine.md").write_text("---\ndescription: my own\n---\nDo my thing.")
    (user_home / "dotfiles" / "skill").mkdir()
    (user_home / "dotfiles" / "skill" / "SKILL.md").write_text("---\ndescription: my skill\n---\nsteps")
    claude = isolated_home / "claude-home"  # CLAUDE_CONFIG_DIR (tests/conftest.py)
    plant(claude / "commands" / "mine.md", user_home / "dotfiles" / "mine.md")
    plant(claude / "commands" / "keys.md", user_home / ".ssh" / "id_rsa")
    plant(claude / "skills" / "mine", user_home / "dotfiles" / "skill")
    plant(claude / "skills" / "aws" / "SKILL.md", user_home / ".aws" / "credentials")
    commands, warnings = discover_commands(isolated_home, workspace)
    skills, skill_warnings = discover_skills(isolated_home, workspace)
    assert list(commands) == ["mine"] and commands["mine"].description == "my own"
    assert skills.names() == ["mine"] and skills.body(skills.get("mine")) == "steps"
    assert any("keys.md" in w and "~/.ssh/id_rsa, a hidden path" in w for w in warnings)
    assert any("aws" in w and "~/.aws/credentials, a hidden path" in w for w in skill_warnings)


def test_a_skill_swapped_for_a_link_after_start_up_is_not_read(tmp_path, workspace, isolated_home, user_home):
    skill = workspace / ".nanohermes" / "skills" / "deploy" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ndescription: ship\n---\nsteps")
    skills, _ = discover_skills(isolated_home, workspace)
    skill.unlink()
    skill.symlink_to(user_home / ".ssh" / "id_rsa")
    with pytest.raises(RefusedFile, match="a hidden path"):
        skills.body(skills.get("deploy"))


def test_an_at_mention_never_attaches_a_hidden_path_even_in_a_home_workspace(isolated_home, user_home):
    (user_home / "notes.md").write_text("plain notes")
    plant(user_home / "keys.md", user_home / ".ssh" / "id_rsa")
    ctx = ToolContext(workspace=user_home, home=isolated_home)
    block, attached, _ = attachment("read @.ssh/id_rsa @.aws/ @keys.md and @notes.md", ctx)
    assert list(attached) == ["notes.md"] and "OPENSSH" not in block and "credentials" not in block


def test_the_rule_refuses_a_link_loop_and_a_state_directory_target_in_one_line(tmp_path, workspace, isolated_home):
    boundary = Boundary.of(isolated_home, workspace)
    loop = plant(workspace / "loop.md", workspace / "loop.md")
    (isolated_home / "memory.json").write_text("{}")
    into_state = plant(workspace / "state.md", isolated_home / "memory.json")
    for path, says in ((loop, "cannot resolve"), (into_state, "inside NanoHermes's state directory")):
        with pytest.raises(RefusedFile) as refused:
            boundary.read_text(path)
        assert says in str(refused.value) and "\n" not in str(refused.value)
    mine = plant(isolated_home / "claude-home" / "commands" / "key.md", isolated_home / "config.toml")
    with pytest.raises(RefusedFile, match="state directory"):  # the user's own link: to their prompt files only
        boundary.check(mine, USER)
    assert (
        boundary.check(isolated_home / "skills" / "x" / "SKILL.md", USER)
        == (isolated_home / "skills").resolve() / "x" / "SKILL.md"
    )


def test_init_never_writes_through_an_agents_md_link_out_of_the_workspace(server, tmp_path, workspace):
    outside = tmp_path / "outside"
    outside.mkdir()
    plant(workspace / "AGENTS.md", outside / "planted.md")  # dangling
    (workspace / "README.md").write_text("# demo\n\nA small demo project for the link test.\n")
    term = Terminal(server, workspace)
    term.send("/init\r")
    term.expect("AGENTS.md not written: refused")
    term.ready()
    assert not (outside / "planted.md").exists()
    (outside / "planted.md").write_text("precious\n")  # now the link's target exists
    term.send("/init\r")
    term.expect("AGENTS.md not written: refused")
    term.ready()
    term.exit()
    assert (outside / "planted.md").read_text() == "precious\n"
    assert (workspace / "AGENTS.md").is_symlink()


def test_a_missing_file_says_nothing_even_where_the_rule_would_refuse_it(tmp_path, monkeypatch):
    monkeypatch.setenv("NANOHERMES_HOME", str(tmp_path))  # the state directory is the workspace itself
    inputs, warnings = gather_prompt_inputs(load_config(workspace=tmp_path))
    assert warnings == [] and inputs.project_guidance == "" and inputs.nanohermes_md == ""


def test_a_project_config_linked_out_of_the_workspace_is_not_read(server, tmp_path, workspace, user_home):
    outside = tmp_path / "rules.toml"
    outside.write_text('[permissions]\ndeny = ["read_file"]\n')
    plant(workspace / ".nanohermes" / "config.toml", outside)
    server.add(text("ok"))
    r = one_shot(server, workspace, "hi")
    assert r.exit_code == 0, r.stderr
    assert "config.toml was not read (refused:" in r.stderr and "outside" in r.stderr
