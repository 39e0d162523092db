"""Loading the whole configuration: config.py's settings, and the tables the parts own, each
parsed and checked by its part ([mcp] by mcp/settings.py, [web_search] by
tools/search_backends.py, [sandbox] by sandbox/policy.py, [permissions] by permissions/table.py,
which adds the project's rules and --allow/--deny, [prices] by provider/prices.py, [hooks] by
hooks/settings.py, with the project's, [lsp] by lsp/settings.py). It sits above those parts, so
that config.py, which everything imports, imports none of them; each part is imported only when
its table is there.
Every error is raised before a session file exists.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nanohermes.config import Config, checked_config, claude_home, merge_layers

if TYPE_CHECKING:
    from nanohermes.sandbox.policy import Policy
    from nanohermes.sandbox.probe import Enforcement

SANDBOX_OFF = 'off: commands run unconfined, with all your rights ([sandbox] level = "off" or --sandbox off)'


def load_config(sandbox_level: str | None = None, allow=(), deny=(), defaults: dict | None = None, **flags) -> Config:
    """Merge the layers (command line > environment > config.toml > `defaults`, a front end's
    own > Config's) and check them; `flags` holds command-line values, None meaning 'not
    given'; `sandbox_level`: --sandbox; `allow`, `deny`: the rules of --allow and --deny."""
    from nanohermes.permissions.table import with_project_and_flags

    values, home, workspace = merge_layers(flags, defaults)
    tables = parse_tables(values, home / "config.toml")
    tables["permissions"] = with_project_and_flags(tables.get("permissions"), workspace, home, allow, deny)
    tables["hooks"] = with_project_hooks(tables.get("hooks"), workspace, home)
    if sandbox_level is not None:
        from nanohermes.sandbox.policy import SandboxSettings

        tables["sandbox"] = (tables.get("sandbox") or SandboxSettings()).with_level(sandbox_level)
    return checked_config(values, home, workspace, tables)


def parse_tables(values: dict, path: Path) -> dict:
    """Take the tables other parts own out of `values`, parsed and checked by those parts."""
    tables = {}
    if "mcp" in values:
        from nanohermes.mcp.settings import parse_mcp_table

        tables["mcp"] = parse_mcp_table(values.pop("mcp"), path)
    if "web_search" in values:
        from nanohermes.tools.search_backends import parse_web_search_table

        tables["web_search"] = parse_web_search_table(values.pop("web_search"), path)
    if "sandbox" in values:
        from nanohermes.sandbox.policy import parse_sandbox_table

        tables["sandbox"] = parse_sandbox_table(values.pop("sandbox"), path)
    if "permissions" in values:
        from nanohermes.permissions.table import from_config_table

        tables["permissions"] = from_config_table(values.pop("permissions"), path)
    if "prices" in values:
        from nanohermes.provider.prices import parse_prices_table

        tables["prices"] = parse_prices_table(values.pop("prices"), path)
    if "hooks" in values:
        from nanohermes.hooks.settings import HookSettings, parse_hooks_table

        tables["hooks"] = HookSettings(user=parse_hooks_table(values.pop("hooks"), path))
    if "lsp" in values:
        from nanohermes.lsp.settings import parse_lsp_table

        tables["lsp"] = parse_lsp_table(values.pop("lsp"), path)
    return tables


# Claude Code's settings files that may hold hooks: the user's (in claude_home()) and the workspace's.
CLAUDE_SETTINGS = ("settings.json",)
CLAUDE_PROJECT_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")


def with_project_hooks(settings, workspace: Path, home: Path):
    """The user's hooks (None: none) with the workspace's, which run only once trusted, and those
    of Claude Code's settings files (None when there are no hooks at all: nothing of hooks is imported)."""
    from nanohermes.permissions.table import read_project_file

    data, _ = read_project_file(workspace, home)  # why it was not read is said with its rules
    claude_files = [claude_home() / name for name in CLAUDE_SETTINGS] + [workspace / n for n in CLAUDE_PROJECT_SETTINGS]
    if settings is None and "hooks" not in data and not any(path.exists() for path in claude_files):
        return None
    from nanohermes.hooks.sources import hook_settings

    return hook_settings(settings, data, workspace, claude_home())


def sandbox_for(config: Config) -> tuple[Policy | None, Enforcement]:
    """The policy commands run under (None: level off) and what it enforces here (its words in full):
    for a session (runtime.py) and for doctor's live proof alike."""
    from nanohermes.sandbox.policy import SandboxSettings, policy_for
    from nanohermes.sandbox.probe import Enforcement, assess, probe

    settings = config.sandbox or SandboxSettings()
    if settings.level == "off":
        return None, Enforcement("off", False, SANDBOX_OFF)
    policy = policy_for(settings, config.workspace, config.home)
    return policy, assess(policy, probe())
