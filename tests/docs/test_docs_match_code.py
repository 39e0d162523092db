"""The docs and the code name the same things: every option, setting, table key and slash command
the code defines is documented, and every one the docs name exists. Read from the code itself
(typer's parameters, config.py's fields, each table's known keys, the slash-command table)."""

from __future__ import annotations

import re
import shlex
import tomllib
from dataclasses import fields

import typer.main

from nanohermes.cli import app
from nanohermes.config import Config
from nanohermes.hooks.settings import EVENTS
from nanohermes.hooks.settings import KEYS as HOOK_KEYS
from nanohermes.lsp.settings import KEYS as LSP_KEYS
from nanohermes.mcp.settings import SERVER_KEYS
from nanohermes.provider.prices import PRICE_KEYS
from nanohermes.sandbox.policy import TABLE_KEYS as SANDBOX_KEYS
from nanohermes.slash.table import COMMANDS, EDITOR, offered
from nanohermes.tools.search_backends import TABLE_KEYS as WEB_SEARCH_KEYS
from tests.docs.pages import DOCS, code_blocks, inline_code, page, pages_text

# config.toml's tables, each parsed by the part that owns it (configure.py): the field, how the
# docs write its header, and the keys it takes (None: its keys are the user's own names).
TABLES = {
    "mcp": ("[mcp.servers.NAME]", SERVER_KEYS),
    "web_search": ("[web_search]", WEB_SEARCH_KEYS),
    "sandbox": ("[sandbox]", SANDBOX_KEYS),
    "permissions": ("[permissions]", frozenset({"allow", "ask", "deny"})),
    "prices": ('[prices."MODEL"]', PRICE_KEYS),
    "hooks": ("[[hooks.", HOOK_KEYS),
    "lsp": ("[lsp.LANGUAGE]", LSP_KEYS),
}
NOT_SETTINGS = {"home", "workspace"}  # Config's fields that come from the environment and the command line only


def _mentioned(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def _cli_commands(command, path=("nanohermes",)):
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _cli_commands(sub, (*path, name))


def _cli():
    import nanohermes.subcommands  # noqa: F401  (registers the subcommands on the app)

    return typer.main.get_command(app)


def cli_options() -> dict[str, set[str]]:
    """Every option of every command, long and short: {option: {commands that take it}}."""
    found: dict[str, set[str]] = {}
    for path, command in _cli_commands(_cli()):
        for param in command.params:
            if param.param_type_name == "option" and not param.hidden:  # typer's own click: no isinstance
                for opt in (*param.opts, *param.secondary_opts):
                    found.setdefault(opt, set()).add(" ".join(path))
    assert {"--model", "-p", "--older-than"} <= set(found), "typer's parameters are read some other way now"
    found["--help"] = {"every command"}
    return found


def cli_subcommands() -> set[str]:
    return {path[-1] for path, _ in _cli_commands(_cli()) if len(path) > 1}


def docs_invocations() -> list[list[str]]:
    """The words after `nanohermes` in every command line the docs show (code blocks and spans)."""
    lines = [line for block in code_blocks(pages_text()) for line in block.splitlines()]
    lines += inline_code(pages_text())
    found = []
    for line in lines:
        for part in re.split(r"\||&&|;", line.split(" #")[0]):
            words = part.strip().removeprefix("$ ").split()
            if words[:1] == ["nanohermes"]:
                try:
                    found.append(shlex.split(" ".join(words[1:])))
                except ValueError:  # an unclosed quote in a shortened example: the words up to it
                    found.append(words[1:])
    return found


def test_every_option_of_the_command_line_is_documented():
    text = pages_text()
    missing = sorted(opt for opt in cli_options() if not _mentioned(opt, text))
    assert not missing, f"options the CLI takes that no page of docs/ names: {missing}"


def test_every_option_and_subcommand_the_docs_show_exists():
    options, subcommands = cli_options(), cli_subcommands()
    unknown = set()
    for words in docs_invocations():
        for i, word in enumerate(words):
            flag = word.split("=")[0]
            if re.fullmatch(r"--?[A-Za-z][\w-]*", flag) and flag not in options:
                unknown.add(flag)
            if i == 0 and re.fullmatch(r"[a-z]+", word) and word not in subcommands:
                unknown.add(f"nanohermes {word}")
    options_paragraph = page("configuration.md").split("## Command-line options", 1)[1].split("\n## ", 1)[0]
    for span in inline_code(options_paragraph):
        for flag in re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", span):
            if flag not in options:
                unknown.add(flag)
    assert not unknown, f"docs/ shows options or subcommands the CLI does not have: {sorted(unknown)}"


def settings() -> set[str]:
    return {f.name for f in fields(Config)} - NOT_SETTINGS - set(TABLES)


def test_every_setting_and_table_is_documented_in_configuration():
    text = page("configuration.md")
    missing = sorted(name for name in settings() if f"`{name}`" not in text)
    missing += [header for header, _ in TABLES.values() if header not in text]
    assert not missing, f"settings of config.py that docs/configuration.md does not name: {missing}"


def test_the_settings_the_configuration_page_lists_exist():
    text = page("configuration.md")
    listed = text.split("may set any of:", 1)[1].split("and the tables", 1)[0]
    while re.search(r"\([^()]*\)", listed):  # what stands in brackets says a setting's values, not a setting
        listed = re.sub(r"\([^()]*\)", "", listed)
    named = set(re.findall(r"`([a-z_]+)`", listed))
    assert named, "the list of settings moved: update this test"
    assert named <= settings(), (
        f"settings docs/configuration.md lists that config.py does not have: {named - settings()}"
    )
    assert settings() <= named, f"settings config.py has that the list leaves out: {settings() - named}"


def test_every_key_of_every_table_is_documented():
    homes = {
        "mcp": "mcp-and-acp.md",
        "web_search": "mcp-and-acp.md",
        "sandbox": "permissions.md",
        "permissions": "permissions.md",
        "prices": "context.md",
        "hooks": "hooks.md",
        "lsp": "diagnostics.md",
    }
    missing = [
        f"{homes[table]}: {key}"
        for table, (_, keys) in TABLES.items()
        for key in sorted(keys)
        if f"`{key}`" not in page(homes[table]) and f"{key} =" not in page(homes[table])
    ]
    missing += [f"hooks.md: {event}" for event in EVENTS if f"`{event}`" not in page("hooks.md")]
    assert not missing, f"table keys the code reads that their page does not name: {missing}"


def _check_toml(data: dict, where: str) -> list[str]:
    wrong = [f"{where}: {key}" for key in data if key not in settings() and key not in TABLES]
    for table, value in data.items():
        if table not in TABLES or not isinstance(value, dict | list):
            continue
        _, keys = TABLES[table]
        if table == "mcp":
            entries = list(value.get("servers", {}).values())
        elif table in ("prices", "hooks", "lsp"):
            entries = [e for v in value.values() for e in (v if isinstance(v, list) else [v])]
        else:
            entries = [value]
        wrong += [f"{where}: [{table}] {key}" for entry in entries for key in entry if key not in keys]
    return wrong


def test_every_toml_example_in_the_docs_is_a_config_the_code_reads():
    wrong = []
    for name, text in DOCS.items():
        for block in code_blocks(text, "toml"):
            data = tomllib.loads(block)
            wrong += _check_toml(data, name)
    assert not wrong, f"docs/ shows config.toml keys the code does not read: {wrong}"


def _documented_commands() -> set[str]:
    table = page("commands.md").split("## Built-in slash commands", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `/")]
    return {name for row in rows for name in re.findall(r"`(/[a-z]+)", row.split(" | ")[0])}


def test_every_slash_command_is_in_the_table_and_every_row_exists():
    code, docs = set(COMMANDS), _documented_commands()
    assert code - docs == set(), f"slash commands the table has that docs/commands.md does not list: {code - docs}"
    assert docs - code == set(), f"slash commands docs/commands.md lists that the table does not have: {docs - code}"


def test_the_commands_an_editor_offers_are_the_ones_both_pages_name():
    editor = [c.name for c in offered(EDITOR)]
    said = page("commands.md").split("An editor over ACP offers", 1)[1].split("\n\n", 1)[0]
    bullet = page("mcp-and-acp.md").split("- Slash commands in the prompt box:", 1)[1].split("\n- ", 1)[0]
    for where, text in (("docs/commands.md", said), ("docs/mcp-and-acp.md", bullet)):
        named = [name for name in re.findall(r"`(/[a-z]+)", text) if name in COMMANDS]
        assert named == editor, f"{where} names {named} as an editor's commands; the table offers {editor}"
