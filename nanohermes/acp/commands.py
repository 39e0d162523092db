"""Slash commands in an editor: the ones that make sense beside an editor's own UI, announced with
`available_commands_update` and run when a prompt's text starts with one.

An editor has its own ways to pick a mode (session modes), a model (the config option), a
session (session/list, session/load) and to quit, so /mode, /model, /resume and /exit are not
here. What is: the conversation (/compact, /context, /reset), the changes (/diff, /undo) and
long-term memory (/memory). A command runs on the main thread like a turn (a /compact makes a
request, and a cancel stops it as Ctrl-C does) and answers with Markdown text; a prompt whose
first word is no command here goes to the model as written (`/usr/bin/env` is a path).

COMMANDS is the table; ACP_COMMAND_SOURCES lists further sources, each a function of the
session's runtime giving EditorCommands: the custom commands (command files, prompt/commands.py),
which expand into the turn's prompt, their `!` commands run under the session's approvals and
sandbox (custom_commands.py); then the MCP servers' prompts (`/server:prompt`). A file never
replaces a command of the table, nor a prompt a file.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

DIFF_LINES = 400  # per file, as the REPL's /diff: asked for, so much, but not a whole generated file


@dataclass(frozen=True)
class EditorCommand:
    name: str  # without the slash
    description: str
    hint: str | None  # what may follow the name (the editor shows it as a placeholder); None: nothing
    run: Callable[[object, str], str | Outcome]  # (the session's runtime, the argument) -> Markdown to show
    expands: bool = False  # True: run gives the prompt to send to the model instead of text to show


@dataclass(frozen=True)
class Outcome:
    shown: str = ""  # what the editor shows as the agent's message
    prompt: str | None = None  # the text the model gets instead (a command that expands)
    mentions: object = None  # the words of `prompt` that may name files (prompt/mentions.py: Mentions)
    note: str | None = None  # told to the model as a tagged note of its own (Agent.tell: what /undo took back)


def _compact(runtime, arg: str) -> str:
    report = runtime.agent.fit_context(force=True, focus=arg or None)
    if report is None or not report.layers:
        said = "; ".join(report.notices) if report is not None and report.notices else "nothing to compact"
        return f"Not compacted: {said}."
    return f"Compacted ({', '.join(report.layers)}): {report.before_chars:,} → {report.after_chars:,} chars."


def _context(runtime, arg: str) -> str:
    status = runtime.agent.context_status()
    lines = [f"The next request holds {len(runtime.agent.messages)} messages, {status.chars:,} chars."]
    lines.append(f"Compaction starts at {status.high_water_chars:,} chars.")
    if status.window:
        lines.append(f"The model's window: {status.window:,} tokens.")
    usage = status.last_usage
    if usage.get("prompt_tokens"):
        cached = usage.get("cached_tokens")
        share = f" ({100 * cached / usage['prompt_tokens']:.0f} % cached)" if cached is not None else ""
        lines.append(f"The last request: {usage['prompt_tokens']:,} tokens in{share}.")
    return "\n".join(lines)


def _reset(runtime, arg: str) -> str:
    runtime.reset()
    return 'Conversation reset: project guidance re-read, this session\'s answers cleared ("always" ones stay).'


def _diff(runtime, arg: str) -> str:
    """Each file write_file and edit_file changed (and not undone), from before its first change to now."""
    checkpoints = runtime.checkpoints
    try:
        changes = [c for c in (checkpoints.changes() if checkpoints else []) if not c.undone]
    except OSError as exc:
        return f"Cannot read the checkpoints: {exc.strerror or exc}."
    if not changes:
        return "No changes in this session (write_file and edit_file are tracked; commands are not)."
    first = {}
    for change in changes:
        first.setdefault(change.path, change)
    parts = []
    for path, change in first.items():
        parts.append(_file_diff(checkpoints, path, change))
    return "\n\n".join(parts)


def _file_diff(checkpoints, path: str, change) -> str:
    from pathlib import Path

    from nanohermes.fileio import read_bounded
    from nanohermes.storage.checkpoints import MAX_READ_BYTES

    if not change.kept:
        return f"**{change.shown}**: the content before was too big to keep; no diff."
    try:
        before = (checkpoints.content(change.before) or b"").decode("utf-8", "replace") if change.existed else ""
        now = read_bounded(Path(path), MAX_READ_BYTES).decode("utf-8", "replace")
    except FileNotFoundError:
        now = ""
    except OSError as exc:
        return f"**{change.shown}**: not read ({exc.strerror or exc}); no diff."
    body = list(
        difflib.unified_diff(
            before.splitlines(), now.splitlines(), f"a/{change.shown}", f"b/{change.shown}", lineterm=""
        )
    )
    if not body:
        return f"**{change.shown}**: the same as before the session."
    cut = f"\n… {len(body) - DIFF_LINES} more lines" if len(body) > DIFF_LINES else ""
    return f"**{change.shown}**\n```diff\n" + "\n".join(body[:DIFF_LINES]) + cut + "\n```"


def _memory(runtime, arg: str) -> str:
    from nanohermes.memory.commands import memory_command

    return memory_command(runtime.memory, arg)


def _help(runtime, arg: str) -> str:
    return "\n".join(f"- `/{c.name}`{' ' + c.hint if c.hint else ''}: {c.description}" for c in available(runtime))


def _undo(runtime, arg: str) -> Outcome:
    from nanohermes.storage.checkpoints import CHANGED_SINCE, MISSING, NOT_KEPT, NOTHING, THROUGH_SYMLINK

    checkpoints = runtime.checkpoints
    if checkpoints is None:
        return Outcome("Undo is not available here.")
    try:
        outcome = checkpoints.undo_last()
    except OSError as exc:
        return Outcome(f"Not undone: {exc.strerror or exc}.")
    change = outcome.checkpoint
    refused = {
        NOTHING: "Nothing to undo (no write_file or edit_file change left in this session).",
        CHANGED_SINCE: f"Not undone: {getattr(change, 'shown', '')} changed since it was written; /diff shows it.",
        THROUGH_SYMLINK: f"Not undone: {getattr(change, 'shown', '')} or a directory on its path is a symbolic "
        "link now; undoing through it could write outside the workspace.",
        MISSING: f"Cannot undo {getattr(change, 'tool', '')}: the content kept before it is missing.",
        NOT_KEPT: f"Cannot undo {getattr(change, 'tool', '')}: the content before was too big to keep.",
    }
    if outcome.status in refused:
        return Outcome(refused[outcome.status])
    done = "removed the file it created" if not change.existed else "restored the content from before it"
    note = f"The user ran /undo: {change.shown} is back to its content before your {change.tool} call"
    return Outcome(
        f"Undid {change.tool} on {change.shown}: {done}.",
        note=note + (" (the file no longer exists)." if not change.existed else "."),
    )


COMMANDS: dict[str, EditorCommand] = {
    c.name: c
    for c in (
        EditorCommand("compact", "summarise the conversation now", "optional focus for the summary", _compact),
        EditorCommand("context", "how full the context is", None, _context),
        EditorCommand("diff", "what write_file and edit_file changed in this session", None, _diff),
        EditorCommand("undo", "take back the last write or edit (again for the one before)", None, _undo),
        EditorCommand(
            "memory",
            "long-term memory: list, add, forget, search, pending, confirm, drop",
            "list | add TEXT | forget ID | search QUERY | pending | confirm ID | drop ID",
            _memory,
        ),
        EditorCommand("reset", "start over in this session with the same rules", None, _reset),
        EditorCommand("help", "the commands here", None, _help),
    )
}


def custom_commands(runtime) -> list[EditorCommand]:
    """The workspace's and the user's command files, each expanding into a prompt."""
    from nanohermes.prompt.commands import discover_commands
    from nanohermes.repo_files import Boundary

    config = runtime.config
    found, _ = discover_commands(config.home, config.workspace, COMMANDS, Boundary.for_config(config))
    workspace = runtime.config.workspace
    return [
        EditorCommand(
            c.name,
            c.description or f"custom command ({c.shown_path(workspace)})",
            c.argument_hint or None,
            lambda runtime, arg, c=c: _expand(runtime, c, arg),
            expands=True,
        )
        for c in found.values()
    ]


def _expand(runtime, command, arg: str) -> Outcome:
    from nanohermes.custom_commands import Invocation, prompt_for

    said: list[str] = []
    prompt = prompt_for(Invocation(command, arg), runtime.agent, said.append)
    return Outcome(shown="\n".join(said), prompt=prompt.text, mentions=prompt.mentions)


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
            found.append(EditorCommand(command_name(server, prompt.name), about, usage_hint(prompt) or None, run, True))
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
        return Outcome(shown=f"Not sent: {exc}.")


# Further sources of commands, each a function of a runtime.
ACP_COMMAND_SOURCES: list[Callable[[object], list[EditorCommand]]] = [custom_commands, mcp_prompts]


def available(runtime) -> list[EditorCommand]:
    """Every command this session offers, the table's first; a later one never shadows it."""
    found = dict(COMMANDS)
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
    return EditorCommand(command_name(server, prompt), "", None, run, expands=True), typed


def run(runtime, command: EditorCommand, arg: str) -> Outcome:
    result = command.run(runtime, arg)
    if isinstance(result, Outcome):
        return result
    return Outcome(prompt=result) if command.expands else Outcome(shown=result)
