"""Issue 44, item 5: one SKILL.md in a cloned repository holding a YAML anchor bomb (nine anchors of
nine aliases, `description: *i`) hung every `-p`, REPL and ACP start in that workspace; the same in
a command file hung `-p /x` and ACP's session/new; YAML or TOML nested 100,000 deep ended every run
with a RecursionError. Each now fails at once, named, and the run goes on without it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from acp import text_block

from nanohermes.bounded import parse_json, parse_toml
from nanohermes.prompt.frontmatter import MAX_DEPTH, FrontMatterError, parse_front_matter
from tests.support.acp_client import AcpHarness
from tests.support.cli import run_cli
from tests.support.scripted_server import text

pytestmark = pytest.mark.subprocess

RUN_TIMEOUT_S = 120  # a start on a loaded machine; the bomb, unbounded, took hours


def anchor_bomb(levels: int = 9, width: int = 9) -> str:
    """`a: &a [x, x, …]`, `b: &b [*a, *a, …]`, … `description: *i`: width ** levels values once expanded."""
    names = "abcdefghijklmnop"[:levels]
    lines = [f"a: &a [{', '.join(['lol'] * width)}]"]
    lines += [f"{n}: &{n} [{', '.join([f'*{p}'] * width)}]" for p, n in itertools.pairwise(names)]
    return "---\n" + "\n".join(lines) + f"\ndescription: *{names[-1]}\n---\nbody\n"


def deep(levels: int) -> str:
    return "---\ndescription: " + "[" * levels + "]" * levels + "\n---\nbody\n"


def plant(path: Path, text_: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text_)
    return path


@pytest.mark.parametrize(
    "front, says",
    [
        (anchor_bomb(), "over 10,000 values once its YAML aliases are expanded"),
        (deep(100_000), "over 64,000 characters"),
        (deep(5_000), f"nests deeper than {MAX_DEPTH} levels"),
        ("---\n" + "".join(f"{' ' * i}k{i}:\n" for i in range(200)) + "---\n", f"deeper than {MAX_DEPTH}"),
    ],
    ids=["anchor-bomb", "100000-deep", "5000-deep-flow", "200-deep-block"],
)
def test_a_front_matter_past_a_bound_fails_at_once_with_the_reason(front, says):
    with pytest.raises(FrontMatterError, match=says):
        parse_front_matter(front)


def test_a_skill_and_a_command_with_anchor_bombs_are_skipped_and_the_run_goes_on(server, workspace):
    skill = plant(workspace / ".claude" / "skills" / "boom" / "SKILL.md", anchor_bomb())
    command = plant(workspace / ".claude" / "commands" / "x.md", anchor_bomb())
    plant(workspace / ".nanohermes" / "skills" / "deep" / "SKILL.md", deep(100_000))
    server.add(text("fine"))
    r = run_cli(["-p", "/x", "--base-url", server.url], workspace, timeout=RUN_TIMEOUT_S)
    assert r.returncode == 0 and "fine" in r.stdout, r.stderr
    assert f"skipped skill {skill}: the front matter holds over 10,000 values" in r.stderr
    assert f"skipped command {command}: the front matter holds over 10,000 values" in r.stderr
    assert "deep/SKILL.md: the front matter is over 64,000 characters" in r.stderr
    assert "Traceback" not in r.stderr
    assert server.chat_requests()[0]["messages"][1]["content"] == "/x"  # sent as written: no command has the name


def test_a_project_config_nested_100000_deep_is_a_one_line_error(server, workspace):
    plant(workspace / ".nanohermes" / "config.toml", "x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    r = run_cli(["-p", "hi", "--base-url", server.url], workspace, timeout=RUN_TIMEOUT_S)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "config.toml is not valid TOML: nested too deep. Fix or remove it." in r.stderr


def test_json_and_toml_nested_past_the_recursion_limit_are_the_parsers_own_errors():
    with pytest.raises(json.JSONDecodeError, match="nested too deep"):
        parse_json("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="nested too deep"):
        parse_toml("a = " + "{b = " * 5_000 + "1" + "}" * 5_000)


def test_an_editors_session_opens_beside_a_command_file_bomb(server, tmp_path, isolated_home):
    ws = tmp_path / "project"
    plant(ws / ".claude" / "commands" / "x.md", anchor_bomb())
    plant(ws / ".claude" / "commands" / "ok.md", "---\ndescription: fine\n---\nSay ok.")
    plant(ws / ".claude" / "skills" / "boom" / "SKILL.md", anchor_bomb())
    env = {
        "NANOHERMES_HOME": str(isolated_home),
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": server.url,
        "NANOHERMES_MODEL": "test-model",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "NO_COLOR": "1",
    }
    agent = AcpHarness(env, tmp_path, tmp_path / "stderr.log")
    try:
        session = agent.run(agent.conn.new_session(cwd=str(ws), mcp_servers=[]), timeout=RUN_TIMEOUT_S).session_id
        server.add(text("ok"))
        agent.run(agent.conn.prompt(session_id=session, prompt=[text_block("/ok")]), timeout=RUN_TIMEOUT_S)
    finally:
        assert agent.close() == 0
    assert server.chat_requests()[0]["messages"][1]["content"].startswith("Say ok.")
