"""Slash commands in an editor: the rows of the one table (slash/table.py) an editor offers, announced
with `available_commands_update` and run when a prompt's text starts with one; a command's Outcome is
shown as Markdown (acp/outcome_view.py).

An editor has its own ways to pick a mode (session modes), a model (the config option), a session
(session/list, session/load) and to quit, so the table's rows for those are the REPL's only. A row an
editor offers runs the table's own function (the REPL runs the same one), but /help, which lists what
this session offers here. A command runs on the main thread like a turn (a /compact makes a request,
and a cancel stops it as Ctrl-C does); a prompt whose first word is no command here goes to the model as
written (`/usr/bin/env` is a path).

ACP_COMMAND_SOURCES lists further sources, each a function of the session's runtime giving
EditorCommands: the custom commands (command files, prompt/commands.py), which expand into the turn's
prompt, their `!` commands run under the session's approvals and sandbox (custom_commands.py); then the
MCP servers' prompts (`/server:prompt`). A file never takes a row's name, nor a prompt a file's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from nanohermes.slash.outcome import Outcome, Text, said
from nanohermes.slash.table import COMMANDS as TABLE
from nanohermes.slash.table import EDITOR, Command, offered, run_command


@dataclass(frozen=True)
class EditorCommand:
    name: str  # without the slash
    description: str
    hint: str | None  # what may follow the name (the editor shows it as a placeholder); None: nothing
    run: Callable[[object, str], Outcome]  # (the session's runtime, the argument); a prompt in it: sent as the turn


def _help(runtime, arg: str) -> Outcome:
    return said(
        Text("\n".join(f"- `/{c.name}`{' ' + c.hint if c.hint else ''}: {c.description}" for c in available(runtime)))
    )


OWN = {"/help": _help}  # the table's rows an editor offers that are its own to run


def table_commands(runtime) -> list[EditorCommand]:
    """The table's rows an editor offers, each run by the table's function (or, /help, by ours)."""
    return [EditorCommand(c.name[1:], c.help, c.editor_hint, _runner(c)) for c in offered(EDITOR)]


def _runner(command: Command) -> Callable[[object, str], Outcome]:
    if command.run is None:
        return OWN[command.name]
    return lambda runtime, arg: run_command(runtime, command, arg)


def custom_commands(runtime) -> list[EditorCommand]:
    """The workspace's and the user's command files, each expanding into a prompt."""
    from nanohermes.prompt.commands import discover_commands
    from nanohermes.repo_files import Boundary

    config = runtime.config
    found, _ = discover_commands(config.home, config.workspace, TABLE, Boundary.for_config(config))
    workspace = runtime.config.workspace
    return [
        EditorCommand(
            c.name,
            c.description or f"custom command ({c.shown_path(workspace)})",
            c.argument_hint or None,
            lambda runtime, arg, c=c: _expand(runtime, c, arg),
        )
        for c in found.values()
    ]


def _expand(runtime, command, arg: str) -> Outcome:
    from nanohermes.custom_commands import Invocation, prompt_for

    ran: list[str] = []  # what its `!` commands did
    prompt = prompt_for(Invocation(command, arg), runtime.agent, ran.append)
    shown = (Text("\n".join(ran)),) if ran else ()
    return Outcome(shown, prompt=prompt.text, mentions=prompt.mentions)


def mcp_prompts(runtime) -> list[EditorCommand]:
    """Each MCP server's prompts known so far (the server ran once: in a session, or `nanohermes mcp
    list`) as `/server:prompt`, expanding into the prompt's text (nanohermes/mcp/prompts.py)."""
    hub = _hub(runtime)
    if hub is None:
        return []
    from nanohermes.mcp.listing import SAFE_NAME, one_line
    from nanohermes.mcp.prompts import command_name, usage_hint

    found = []
    for server in hub.servers:
        for prompt in hub.known_prompts(server) or ():
            if not SAFE_NAME.match(prompt.name):  # a name the editor would show oddly: /mcp in the REPL has it
                continue
            about = one_line(prompt.description, 200) or f"a prompt of the MCP server {server}"
            run = lambda runtime, arg, s=server, p=prompt.name: _prompt(runtime, s, p, arg)  # noqa: E731
            found.append(EditorCommand(command_name(server, prompt.name), about, usage_hint(prompt) or None, run))
    return found


def _hub(runtime):
    configured = getattr(runtime, "configured", None)
    return configured.mcp if configured is not None else None


def _prompt(runtime, server: str, name: str, arg: str) -> Outcome:
    from nanohermes.mcp.prompts import PromptError, prompt_text
    from nanohermes.prompt.mentions import Mentions

    try:  # the server's text names no file to attach: only what was typed does
        return Outcome(prompt=prompt_text(_hub(runtime), server, name, arg), mentions=Mentions(arg))
    except PromptError as exc:
        return said(Text(f"Not sent: {exc}."))


# Further sources of commands, each a function of a runtime.
ACP_COMMAND_SOURCES: list[Callable[[object], list[EditorCommand]]] = [custom_commands, mcp_prompts]


def available(runtime) -> list[EditorCommand]:
    """Every command this session offers, the table's first; a later one never shadows it."""
    found = {c.name: c for c in table_commands(runtime)}
    for source in ACP_COMMAND_SOURCES:
        for command in source(runtime):
            found.setdefault(command.name, command)
    return list(found.values())


def announced(runtime) -> list[AvailableCommand]:
    return [
        AvailableCommand(
            name=c.name,
            description=c.description,
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=c.hint)) if c.hint else None,
        )
        for c in available(runtime)
    ]


def parse(text: str, runtime) -> tuple[EditorCommand, str] | None:
    """(the command, its argument) when the prompt starts with one of this session's commands, or
    names an MCP server's prompt not listed yet (`/server:prompt`, the REPL's `/mcp:server:prompt`)."""
    if not text.startswith("/"):
        return None
    head, _, arg = text[1:].partition(" ")
    name, _, rest = head.partition("\n")
    found = {c.name: c for c in available(runtime)}.get(name)
    if found is not None:
        return found, (rest + " " + arg).strip() if rest else arg.strip()
    return _unlisted_prompt(text, runtime)


def _unlisted_prompt(text: str, runtime) -> tuple[EditorCommand, str] | None:
    from nanohermes.mcp.prompts import command_name, find_prompt_command

    hub = _hub(runtime)
    named = find_prompt_command(text, hub.servers) if hub is not None else None
    if named is None:
        return None
    server, prompt, typed = named
    run = lambda runtime, arg: _prompt(runtime, server, prompt, arg)  # noqa: E731
    return EditorCommand(command_name(server, prompt), "", None, run), typed


def take(text: str, runtime) -> Outcome | None:
    """Run the command the prompt starts with; None when it names none (it goes to the model as written)."""
    found = parse(text, runtime)
    if found is None:
        return None
    command, arg = found
    return command.run(runtime, arg)
