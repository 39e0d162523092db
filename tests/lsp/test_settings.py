"""`[lsp.LANGUAGE]` checked as the configuration loads; what a session checks by default; where a
server's program may come from (never the repository: not its config, not a PATH entry inside it)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from nanohermes.configure import load_config
from nanohermes.errors import ConfigError
from nanohermes.lsp.settings import in_force, parse_lsp_table, resolve_program

WHERE = Path("/home/u/.nanohermes/config.toml")


def parsed(**tables):
    return parse_lsp_table(tables, WHERE)


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_python_needs_no_command_and_checks_py_files_any_other_language_names_both():
    (python,) = parsed(python={"timeout": 5})
    assert python.command == ("pylsp",) and python.extensions == (".py", ".pyi") and python.timeout == 5.0
    (rust,) = parsed(rust={"command": ["rust-analyzer"], "extensions": [".rs"], "severity": "warning"})
    assert rust.label == "rust-analyzer" and rust.least_severity == 2 and rust.sandbox is None
    with pytest.raises(ConfigError, match=r"\[lsp.rust\] needs command"):
        parsed(rust={"extensions": [".rs"]})
    with pytest.raises(ConfigError, match="extensions must list"):
        parsed(go={"command": ["gopls"]})


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ({"command": "pylsp"}, "command must be a list of strings"),
        ({"command": []}, "command must name a program"),
        ({"command": ["bin/pylsp"]}, "not relative"),
        ({"timeout": 0}, "timeout must be a number of seconds"),
        ({"startup_timeout": float("nan")}, "startup_timeout must be a number of seconds"),
        ({"severity": "hint"}, 'severity must be "error" or "warning"'),
        ({"sandbox": "yes"}, "enabled and sandbox must be true or false"),
        ({"extensions": ["py"]}, "extensions must list"),
        ({"args": ["--stdio"]}, r"unknown key\(s\) args"),
    ],
)
def test_a_wrong_key_is_an_error_naming_it(entry, says):
    with pytest.raises(ConfigError, match=says):
        parsed(python=entry)


def test_a_table_that_is_not_per_language_is_an_error():
    with pytest.raises(ConfigError, match=r"one table per language"):
        parse_lsp_table({"command": ["pylsp"]}, WHERE)
    with pytest.raises(ConfigError, match="a language is its LSP id"):
        parsed(Python={"command": ["pylsp"]})


def test_pylsp_is_the_default_unless_python_is_configured_or_turned_off():
    assert [(s.language, s.command, s.configured) for s in in_force(())] == [("python", ("pylsp",), False)]
    assert [s.command for s in in_force(parsed(python={"command": ["/opt/pyright"]}))] == [("/opt/pyright",)]
    assert in_force(parsed(python={"enabled": False})) == []
    rust_only = in_force(parsed(rust={"command": ["ra"], "extensions": [".rs"]}))
    assert [s.language for s in rust_only] == ["rust", "python"]


def test_config_toml_s_lsp_table_reaches_the_config(isolated_home, workspace):
    (isolated_home / "config.toml").write_text('[lsp.python]\ncommand = ["pylsp"]\ntimeout = 7\n')
    (python,) = load_config(workspace=workspace).lsp
    assert python.timeout == 7.0


def test_a_project_config_cannot_name_a_language_server(isolated_home, workspace):
    (workspace / ".nanohermes").mkdir()
    (workspace / ".nanohermes" / "config.toml").write_text('[lsp.python]\ncommand = ["/tmp/evil"]\n')
    config = load_config(workspace=workspace)
    assert config.lsp == ()
    assert any("only [permissions] and [hooks]" in w for w in config.permissions.warnings)


def test_a_program_is_never_found_on_a_path_entry_inside_the_workspace(workspace, tmp_path, monkeypatch):
    inside = executable(workspace / ".venv" / "bin" / "fake-ls")
    monkeypatch.setenv("PATH", os.pathsep.join([str(inside.parent), ".", "/usr/bin"]))
    argv, why = resolve_program(("fake-ls", "--stdio"), workspace)
    assert argv is None and "only inside the workspace" in why and str(inside) in why
    executable(workspace / "fake-ls")  # the relative entry "." is the workspace when it runs there
    monkeypatch.chdir(workspace)
    assert resolve_program(("fake-ls",), workspace)[0] is None
    outside = executable(tmp_path / "bin" / "fake-ls")
    monkeypatch.setenv("PATH", os.pathsep.join([str(inside.parent), str(outside.parent)]))
    assert resolve_program(("fake-ls", "--stdio"), workspace) == ([str(outside), "--stdio"], "")


def test_an_absolute_path_is_the_users_choice_and_must_be_executable(workspace, tmp_path):
    program = executable(tmp_path / "ls-server")
    assert resolve_program((str(program),), workspace) == ([str(program)], "")
    assert resolve_program((str(tmp_path / "missing"),), workspace) == (
        None,
        f"{tmp_path / 'missing'} is not an executable file",
    )
    assert resolve_program(("no-such-language-server-here",), workspace) == (None, "")
