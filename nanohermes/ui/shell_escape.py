"""`!command`: the user runs a command in the workspace themselves, as Claude Code's and Codex's
`!` does. The user is the actor (sandbox/actors.py): it runs with their rights, outside the
sandbox, as it would in their own shell, and asks nothing. It goes through run_command's own
machinery (tools/shell.py: the timeout, the process group, the output capped with a note, secrets
redacted), shows as the user's tool line with its output under it, and what it printed joins the
conversation with the user's next message, as their own context (loop/transcript.py keeps it
beside their words, so the files it names are not attached).
"""

from __future__ import annotations

import time
from dataclasses import replace

from nanohermes import events as ev
from nanohermes.calls import ResultFacts
from nanohermes.errors import ToolError, ToolInterrupted
from nanohermes.sandbox.actors import USER, command_policy
from nanohermes.text import valid_unicode
from nanohermes.tools.shell import run_foreground
from nanohermes.ui.toolview import Line, Ran, output_tail, result_line

SHOWN_LINES = 30  # a `git status` or a short log whole on screen; /show pages the rest
CONTEXT_HEADER = (
    "[The user ran this command in the workspace themselves; what it printed is context for their message:]"
)
USAGE = "!COMMAND runs COMMAND in the workspace as you (outside the sandbox); its output goes with your next message"
CALL_ID = "user-shell"  # no model call: the id only fills the event the tool line is drawn from


def context_block(text: str) -> str:
    """How a `!command`'s output travels with the next message."""
    return f"{CONTEXT_HEADER}\n{text}"


def run_shell_escape(repl, command: str) -> str | None:
    """Run `command` for the user; the text for the model (None when nothing ran)."""
    command = command.strip()
    if not command:
        repl.say(f"usage: {USAGE}", "dim")
        return None
    agent, area = repl.runtime.agent, repl.renderer.area
    ctx = replace(agent.ctx, progress=area.set_detail)
    area.set_status(f"! {command}")
    started = time.monotonic()
    repl.keys_on()  # Esc stops it, as it stops a turn
    try:
        policy = command_policy(USER, ctx.sandbox)  # the user's own command: their rights
        output = run_foreground(ctx, command, ctx.command_timeout, policy, tail_lines=SHOWN_LINES)
        text, ok, facts = str(output), True, output.facts
    except ToolError as exc:  # the sandbox cannot be enforced here: nothing ran
        text, ok, facts = f"error: {exc}", False, ResultFacts()
    except ToolInterrupted as stop:
        text, ok, facts = stop.answer, False, stop.facts
    finally:
        repl.keys_off(take=True)
        area.stop()
    text = ctx.redactor.text(valid_unicode(text))
    facts = replace(facts, tail=ctx.redactor.text(valid_unicode(facts.tail)))
    seconds = time.monotonic() - started
    repl.show(shell_lines(ev.ToolFinished(CALL_ID, "run_command", text, ok, seconds, facts), command))
    repl.renderer.ran.append(Ran(f"! {command}", text=text))
    return text


def shell_lines(finished: ev.ToolFinished, command: str) -> list[Line]:
    """The tool line, the output's last lines, and where the output goes."""
    line = result_line(finished, "", title="! " + " ".join(command.split()))  # a failure to start: its error
    tail = output_tail(finished, more_note=" · /show pages all of it", count=SHOWN_LINES)
    return [
        line,
        *tail,
        [("  · ran as you, outside the sandbox · the output goes to the model with your next message", "dim")],
    ]
