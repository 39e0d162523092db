"""Slash commands: one table, extended by the context and memory parts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Command:
    name: str
    usage: str
    help: str
    run: Callable[["object", str], bool]  # (repl, argument) -> keep going?


COMMANDS: dict[str, Command] = {}


def command(name: str, usage: str, help: str):
    def register(fn):
        COMMANDS[name] = Command(name, usage, help, fn)
        return fn

    return register


@command("/help", "/help", "show the commands and keys")
def _help(repl, arg: str) -> bool:
    lines = [f"  {c.usage:<22} {c.help}" for c in COMMANDS.values()]
    lines.append("  Enter sends · Alt+Enter or Ctrl-J inserts a newline · Ctrl-C clears the line or stops the turn · Ctrl-D exits")
    repl.say("\n".join(lines))
    return True


@command("/exit", "/exit", "leave (the session is saved)")
def _exit(repl, arg: str) -> bool:
    return False


@command("/reset", "/reset", "start a new conversation with the same rules")
def _reset(repl, arg: str) -> bool:
    repl.runtime.reset()
    repl.say("conversation reset (project guidance re-read)")
    return True


@command("/session", "/session", "name, path and size of this session")
def _session(repl, arg: str) -> bool:
    s = repl.runtime.session
    repl.say(f"session {s.name}\n  path {s.path}\n  size {s.size_bytes():,} bytes, {len(repl.runtime.agent.messages) - 1} messages in context")
    return True


def run_command(repl, line: str) -> bool:
    name, _, arg = line.strip().partition(" ")
    cmd = COMMANDS.get(name)
    if cmd is None:
        repl.say(f"unknown command {name}; /help lists them")
        return True
    return cmd.run(repl, arg.strip())
