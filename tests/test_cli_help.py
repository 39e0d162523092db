"""`nanohermes --help` as a user reads it: no type metavar after flags, the value's name after
options that take one, and config.toml's table names printed, not taken for markup."""

from __future__ import annotations

import pytest

from tests.support.cli import run_cli

pytestmark = pytest.mark.subprocess

COMMANDS = [[], ["doctor"], ["sessions"], ["sessions", "prune"], ["mcp"], ["mcp", "list"], ["acp"]]


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) or "nanohermes" for c in COMMANDS])
def test_help_shows_no_type_metavar_on_any_flag(command, workspace):
    r = run_cli([*command, "--help"], workspace)
    assert r.returncode == 0 and r.stderr == ""
    assert "<bool>" not in r.stdout and "<str>" not in r.stdout and "<path>" not in r.stdout


def test_help_names_what_each_option_takes(workspace):
    lines = run_cli(["--help"], workspace).stdout.splitlines()
    options = {line.strip().split("  ")[0] for line in lines if line.startswith("  -")}
    for option in ("-p, --prompt TASK", "--base-url URL", "--model NAME", "-C, --workspace DIR", "--max-steps N"):
        assert option in options, options
    assert "-c, --continue" in options and "--yes" in options  # flags take nothing


def test_the_mcp_table_name_is_printed_not_eaten_as_markup(workspace):
    assert "The MCP servers of config.toml ([mcp.servers.NAME]): their state and tools." in (
        run_cli(["mcp", "--help"], workspace).stdout
    )
