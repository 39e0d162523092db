"""Slash commands about the conversation itself: /help, /exit, /reset, /session, /compact and
/context."""

from __future__ import annotations

import json
from contextlib import nullcontext

from nanohermes.ui.command_table import COMMANDS, command


@command("/help", "/help", "show the commands and keys")
def _help(repl, arg: str) -> bool:
    width = max(len(c.usage) for c in COMMANDS.values())
    lines = [f"  {c.usage:<{width}}  {c.help}" for c in COMMANDS.values()]
    lines.append(
        "  Enter sends · Alt+Enter or Ctrl-J inserts a newline · Ctrl-C clears the line or stops the turn · "
        "Esc stops the turn · keys typed while it runs wait for the next prompt · Shift-Tab cycles the mode · "
        "Ctrl-D exits"
    )
    repl.say("\n".join(lines))
    return True


@command("/exit", "/exit", "leave (the session is saved)")
def _exit(repl, arg: str) -> bool:
    return False


@command("/clear", "/clear", "same as /reset")
@command("/reset", "/reset", "start a new conversation with the same rules")
def _reset(repl, arg: str) -> bool:
    repl.runtime.reset()
    repl.say('conversation reset (project guidance re-read, this session\'s answers cleared; "always" ones stay)')
    return True


@command("/session", "/session", "name, path and size of this session")
def _session(repl, arg: str) -> bool:
    s = repl.runtime.session
    in_context = len(repl.runtime.agent.messages) - 1
    repl.say(f"session {s.name}\n  path {s.path}\n  size {s.size_bytes():,} bytes, {in_context} messages in context")
    return True


@command("/compact", "/compact [focus]", "summarise the conversation now (optional focus for the summary)")
def _compact(repl, arg: str) -> bool:
    agent = repl.runtime.agent
    renderer = getattr(repl, "renderer", None)
    with renderer.holding_notices() if renderer is not None else nullcontext([]) as held:
        report = agent.fit_context(force=True, focus=arg or None)
    if report is not None and report.layers:
        for notice in held:  # what changed, before → after
            renderer(notice)
    else:  # one line for one fact: why there was nothing to do
        repl.say(
            "· " + ("; ".join(report.notices) if report is not None and report.notices else "nothing to compact"), "dim"
        )
    return True


@command("/context", "/context", "what the next request holds, against the budget")
def _context(repl, arg: str) -> bool:
    from nanohermes.context.tokens import count_tokens
    from nanohermes.ui.context_view import context_parts, render_context

    runtime = repl.runtime
    inputs = runtime.prompt.inputs
    sections = {
        "project guidance": len(inputs.project_guidance) + len(inputs.nanohermes_md),
        "skills listing": len(inputs.skills_listing),
    }
    agent = runtime.agent
    parts = context_parts(sections, agent.messages, agent.tool_schemas())
    sample = json.dumps(agent.messages, ensure_ascii=False)  # the request's own chars-per-token ratio
    ratio = count_tokens(sample) / max(1, len(sample))
    tokens = {name: round(chars * ratio) for name, chars in parts.items()}
    budget = agent.settings.high_water_chars  # compaction starts here
    if agent.window:
        limit, label = agent.window, f"the {agent.window:,}-token window"
    else:
        limit = round(budget * ratio)
        label = f"the budget: {budget:,} chars ≈ {limit:,} tokens"
    console = getattr(repl, "console", None)
    width = console.width if console is not None else 80
    colour = console is not None and console.color_system is not None and not console.no_color
    last = last_request_line(agent.context_status().last_usage).strip()
    repl.show(
        render_context(parts, tokens, limit, label, width=width, colour=colour) + ([[(last, "dim")]] if last else [])
    )
    return True


def last_request_line(usage: dict) -> str:
    """`last request: 12,400 tokens in (91 % cached); 3,100 of 48,000 chars new since the one before`."""
    if not usage:
        return ""
    line = "\nlast request:"
    if usage.get("prompt_tokens"):
        line += f" {usage['prompt_tokens']:,} tokens in"
        if usage.get("cached_tokens") is not None:
            line += f" ({100 * usage['cached_tokens'] / usage['prompt_tokens']:.0f} % cached)"
        line += ";"
    return line + f" {usage['uncached_chars']:,} of {usage['sent_chars']:,} chars new since the one before"
