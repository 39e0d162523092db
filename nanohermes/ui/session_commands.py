"""Slash commands about the conversation itself: /help, /exit (/quit), /clear, /reset, /session,
/compact and /context (with `summary`: the summary that stands in for the compacted messages)."""

from __future__ import annotations

import json
from contextlib import nullcontext

from nanohermes.cost import cost_text, dollars
from nanohermes.ui.command_table import COMMANDS, command
from nanohermes.ui.escape import neutralize

KEYS = (
    "Enter sends · Alt+Enter or Ctrl-J inserts a newline · Tab completes /commands and @paths · "
    "@path attaches a file (a directory's listing) · !command runs it, its output goes with your next message · "
    "Ctrl-O pages the last tool output in full · Ctrl-C clears the line or stops the turn, twice on an empty line "
    "exits · Esc stops the turn · while a turn runs, Enter queues what you type (Up takes the last back to edit) · "
    "Shift-Tab cycles the mode · Ctrl-D, /exit or exit leaves"
)
CUSTOM_HEADER = "commands from files:"
NARROW_HELP = 60  # below this many columns a command's description goes under it, not beside it


def help_lines(commands, width: int, custom=()) -> list[str]:
    """Each command with its description wrapped on words beside it (under it when narrow), then the
    commands from files (`custom`, ui/custom_commands.py), then the keys."""
    import textwrap

    usage_width = max(len(c.usage) for c in [*commands, *custom])
    lines = _rows(commands, usage_width, width)
    if custom:
        lines += ["", CUSTOM_HEADER, *_rows(custom, usage_width, width)]
    keys = [k.strip() for k in KEYS.split(" · ")]
    return lines + [""] + [line for key in keys for line in textwrap.wrap(key, width - 1, subsequent_indent="    ")]


def _rows(commands, usage_width: int, width: int) -> list[str]:
    import textwrap

    lines = []
    for c in commands:
        if width < NARROW_HELP:
            lines.append(f"  {c.usage}")
            lines += textwrap.wrap(c.help, width - 1, initial_indent="      ", subsequent_indent="      ")
            continue
        indent = " " * (usage_width + 4)
        text = textwrap.wrap(c.help, max(20, width - 1 - len(indent))) or [""]
        lines.append(f"  {c.usage:<{usage_width}}  {text[0]}".rstrip())
        lines += [indent + more for more in text[1:]]
    return lines


@command("/help", "/help", "show the commands and keys")
def _help(repl, arg: str) -> bool:
    console = getattr(repl, "console", None)
    custom = getattr(repl, "custom_help", list)()
    repl.say("\n".join(help_lines(list(COMMANDS.values()), console.width if console is not None else 80, custom)))
    return True


@command("/quit", "/quit", "same as /exit")
@command("/exit", "/exit", "leave (the session is saved); also /quit, exit, quit")
def _exit(repl, arg: str) -> bool:
    return False


@command("/clear", "/clear", "start a new session; the one cleared stays saved (/resume)")
def _clear(repl, arg: str) -> bool:
    old = repl.runtime.session
    name, saved = old.name, old.saved
    repl.open_session(None)
    if saved:
        repl.say(f"· the cleared conversation is saved as session {name}: /resume {name} returns to it", "dim")
    return True


@command("/reset", "/reset", "start over in this session with the same rules (the conversation is dropped)")
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


@command("/context", "/context [summary]", "what the next request holds, part by part; summary: the summary text")
def _context(repl, arg: str) -> bool:
    from nanohermes.context.images import tokens_of
    from nanohermes.context.tokens import count_tokens

    if arg == "summary":
        return _summary(repl)
    if arg:
        repl.say("/context shows the parts of the next request; /context summary the compaction summary", "dim")
        return True
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
    tokens["images"] = sum(tokens_of(m) for m in agent.messages)  # by OpenAI's formula, not by chars
    budget = agent.settings.high_water_chars  # compaction starts here
    if agent.settings.window:
        limit, label = agent.settings.window, f"the {agent.settings.window:,}-token window"
    else:
        limit = round(budget * ratio)
        label = f"the context limit: {budget:,} chars ≈ {limit:,} tokens"  # where compaction starts
    console = getattr(repl, "console", None)
    width = console.width if console is not None else 80
    colour = console is not None and console.color_system is not None and not console.no_color
    status = agent.context_status()
    last = last_request_line(status.last_usage).strip()
    spent = f"session so far: {cost_text(status.spent)} (/cost for the prices)" if status.spent else ""
    lines = render_context(parts, tokens, limit, label, width=width, colour=colour)
    repl.show(lines + [[(line, "dim")] for line in (last, spent) if line])
    return True


def _summary(repl) -> bool:
    """The summary that stands in for the messages a compaction summarised, as the model reads it."""
    from nanohermes.context.summary import find_summary, summary_text

    messages = repl.runtime.agent.messages
    at = find_summary(messages)
    if at is None:
        repl.say("no summary: nothing in this conversation has been summarised yet (/compact summarises now)", "dim")
        return True
    text = summary_text(messages[at])
    lines = [[("summary of the earlier conversation, as the model reads it:", "bold")]]
    lines += [[(neutralize("  " + line), "")] for line in text.splitlines()]
    repl.show(lines)
    return True


def last_request_line(usage: dict) -> str:
    """`last request: 12,400 tokens in (91 % cached), $0.0012; 3,100 of 48,000 chars new since the one before`."""
    if not usage:
        return ""
    line = "\nlast request:"
    if usage.get("prompt_tokens"):
        line += f" {usage['prompt_tokens']:,} tokens in"
        if usage.get("cached_tokens") is not None:
            line += f" ({100 * usage['cached_tokens'] / usage['prompt_tokens']:.0f} % cached)"
        cost = usage.get("cost_usd")
        line += f", {'cost unknown' if cost is None else dollars(cost)};"
    return line + f" {usage['uncached_chars']:,} of {usage['sent_chars']:,} chars new since the one before"
