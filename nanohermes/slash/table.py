"""The slash commands: one table for every front end, in /help's order.

Each row is a command's name, usage, help, the front ends that offer it (the REPL, an editor over
ACP) and, for a command either front end runs the same way, `run`: a function of the session's
runtime and the argument that returns an Outcome (slash/outcome.py: plain data; ui/ renders it with
rich, acp/ as Markdown; `run_command` tells the model its note). A row without `run` is its front
end's own: /help lists this table for the front end asking, /exit leaves it, and the rest need the
terminal (a question, the pager, the prompt's session; ui/*_commands.py register them with
`@handles`). Command files (prompt/commands.py) and MCP prompts are not rows: a front end offers
them beside the table, and a file never takes a row's name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nanohermes.slash import changes, conversation, status
from nanohermes.slash.outcome import Outcome

REPL = "repl"  # the terminal's REPL (ui/)
EDITOR = "editor"  # an editor over ACP (acp/)
BOTH = frozenset({REPL, EDITOR})
REPL_ONLY = frozenset({REPL})


@dataclass(frozen=True)
class Command:
    name: str  # with the slash
    usage: str
    help: str
    offered: frozenset[str] = REPL_ONLY
    run: Callable[[object, str], Outcome] | None = None  # (runtime, argument); None: the front end's own
    hint: str | None = None  # what may follow the name, as an editor shows it; None: from `usage`

    @property
    def editor_hint(self) -> str | None:
        return self.hint or self.usage.partition(" ")[2] or None


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        Command("/help", "/help", "show the commands (and in the terminal, the keys)", BOTH),
        Command("/exit", "/exit", "leave (the session is saved); also /quit, exit, quit"),
        Command("/quit", "/quit", "same as /exit"),
        Command("/clear", "/clear", "start a new session; the one cleared stays saved (/resume)"),
        Command(
            "/reset",
            "/reset",
            "start over in this session with the same rules (the conversation is dropped)",
            BOTH,
            conversation.reset,
        ),
        Command("/session", "/session", "name, path and size of this session", BOTH, conversation.session),
        Command(
            "/compact",
            "/compact [focus]",
            "summarise the conversation now (optional focus for the summary)",
            BOTH,
            conversation.compact,
            "optional focus for the summary",
        ),
        Command(
            "/context",
            "/context [summary]",
            "what the next request holds, part by part; summary: the summary text",
            BOTH,
            conversation.context,
        ),
        Command(
            "/cost",
            "/cost",
            "what this session has cost so far, the last request, and the model's prices",
            BOTH,
            status.cost,
        ),
        Command(
            "/show", "/show [N|list]", "page a tool call's full output: the last, or the Nth back (Ctrl-O: the last)"
        ),
        Command(
            "/memory",
            "/memory [list|add|forget|search]",
            "long-term memory: list, add TEXT, forget ID, search Q; "
            "pending, confirm ID, drop ID: what a compaction held",
            BOTH,
            status.memory,
            "list | add TEXT | forget ID | search QUERY | pending | confirm ID | drop ID",
        ),
        Command("/diff", "/diff", "what write_file and edit_file changed in this session", BOTH, changes.diff),
        Command("/undo", "/undo", "take back the last write or edit (again for the one before)", BOTH, changes.undo),
        Command("/rewind", "/rewind [N [both|code|chat]]", "back to before an earlier request: files, chat, or both"),
        Command("/fork", "/fork [NAME]", "a new session from here; this one stays as it is (/resume it)"),
        Command("/permissions", "/permissions [revoke N|clear]", "the rules and answers in force; take answers back"),
        Command("/sandbox", "/sandbox", "what confines the model's commands here, in full (doctor proves it live)"),
        Command("/model", "/model [NAME]", "switch the model from the next request (Tab completes the server's list)"),
        Command(
            "/mode",
            "/mode [plan|ask|auto|accept-edits]",
            "switch the permission mode from the next request (Shift-Tab cycles)",
        ),
        Command(
            "/resume", "/resume [NAME]", "continue another saved session (a list of this workspace's when no name)"
        ),
        Command(
            "/tasks",
            "/tasks [stop|diff|apply|drop ID]",
            "background tasks (stop ID); helpers' changes held (diff, apply, drop NAME)",
            BOTH,
            status.tasks,
        ),
        Command(
            "/mcp",
            "/mcp [:SERVER:PROMPT]",
            "list the MCP servers' prompts, each a command that sends it as your message",
        ),
        Command("/init", "/init", "draft a short AGENTS.md from the workspace (shown first, written on yes)"),
    )
}


def offered(front_end: str) -> list[Command]:
    """The commands `front_end` offers, in /help's order."""
    return [c for c in COMMANDS.values() if front_end in c.offered]


def run_command(runtime, command: Command, arg: str) -> Outcome:
    """Run a shared command; the note it leaves for the model is told here, tagged (Agent.tell)."""
    outcome = command.run(runtime, arg)
    if outcome.note is not None:
        runtime.agent.tell(outcome.note.kind, outcome.note.text)
    return outcome
