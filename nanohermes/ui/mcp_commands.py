"""MCP in the REPL: a server's prompts as slash commands (`/mcp:server:prompt key=value …`, and
`/mcp` to list them), and a server's question (elicitation) asked at the terminal.

A prompt is text the server wrote, run because the user typed its command: it is sent as the
user's message. A question is asked field by field; what is typed is checked against the
field's type and asked again when it does not fit. Ctrl-D declines, Esc or Ctrl-C cancels.
"""

from __future__ import annotations

import shlex

from nanohermes.errors import NanoHermesError
from nanohermes.ui.command_table import command

PROMPTS_LISTED = 50  # /mcp's list; a server with more is a catalogue


class PromptError(NanoHermesError):
    """A prompt command that cannot run as typed; the message says how to type it."""


@command("/mcp", "/mcp [:SERVER:PROMPT]", "list the MCP servers' prompts, each a command that sends it as your message")
def _mcp(repl, arg: str) -> bool:
    hub = _hub(repl)
    if not arg.startswith(":"):
        for line in prompt_lines(hub):
            repl.say(line)
        return True
    target, _, rest = arg[1:].partition(" ")
    server, _, name = target.partition(":")
    text = prompt_text(hub, server, name, rest)
    repl.say(f"· prompt {server}:{name} ({len(text):,} chars) sent as your message", "dim")
    repl.turn(text)
    return True


def _hub(repl):
    configured = repl.runtime.configured
    if configured is None or configured.mcp is None:
        raise PromptError("no MCP servers configured ([mcp.servers.NAME] in config.toml)")
    return configured.mcp


def prompt_lines(hub) -> list[str]:
    """Each server's prompts as the commands that run them (starting the servers)."""
    from nanohermes.mcp.hub import McpCallTimeout, McpUnavailable
    from nanohermes.mcp.listing import one_line

    lines = []
    for server in hub.servers:
        try:
            prompts = hub.prompts(server)
        except (McpUnavailable, McpCallTimeout) as exc:
            lines.append(f"✗ {server}: {one_line(str(exc), 300)}")
            continue
        for prompt in prompts[:PROMPTS_LISTED]:
            args = " ".join(f"{a.name}=…" if a.required else f"[{a.name}=…]" for a in prompt.arguments or ())
            about = one_line(prompt.description or "", 100)
            lines.append(one_line(f"/mcp:{server}:{prompt.name} {args}", 200) + (f" — {about}" if about else ""))
    return lines or ["no MCP server offers prompts"]


def prompt_text(hub, server: str, name: str, typed: str) -> str:
    """The prompt's messages as one text (non-text parts named), its arguments from `key=value`
    words; a PromptError says what is missing."""
    from mcp import MCPError

    from nanohermes.mcp.hub import McpCallTimeout, McpUnavailable
    from nanohermes.mcp.listing import one_line

    if server not in hub.servers:
        raise PromptError(f"no MCP server {server!r}; /mcp lists the prompts")
    try:
        words = shlex.split(typed)
    except ValueError as exc:
        raise PromptError(f"cannot read the arguments: {exc}") from None
    given = dict(w.split("=", 1) for w in words if "=" in w)
    try:
        prompt = next((p for p in hub.prompts(server) if p.name == name), None)
        if prompt is None:
            raise PromptError(f"{server} has no prompt {name!r}; /mcp lists them")
        missing = [a.name for a in prompt.arguments or () if a.required and a.name not in given]
        if missing:
            usage = " ".join(f"{a.name}=…" for a in prompt.arguments or ())
            raise PromptError(f"/mcp:{server}:{name} needs {', '.join(missing)}: /mcp:{server}:{name} {usage}")
        got = hub.get_prompt(server, name, given)
    except (McpUnavailable, McpCallTimeout, MCPError) as exc:
        raise PromptError(f"MCP server {server}: {one_line(str(exc), 300)}") from None
    parts = [_message_text(m.content) for m in got.messages]
    return "\n\n".join(p for p in parts if p) or f"(the prompt {name} of {server} is empty)"


def _message_text(content) -> str:
    from nanohermes.mcp.listing import resource_text

    kind = getattr(content, "type", "")
    if kind == "text":
        return content.text
    if kind == "resource":
        return resource_text(content.resource)
    return f"[{kind or 'unknown'} content: not shown]"


def ask_form(repl, question):
    """A server's question at the terminal: the Reply (accept with the values, decline, cancel)."""
    from prompt_toolkit import prompt as ask
    from prompt_toolkit.key_binding import KeyBindings

    from nanohermes.mcp.asking import ACCEPT, CANCEL, DECLINE, Reply, parse_value

    keys = KeyBindings()

    @keys.add("escape", eager=True)
    def _cancel(event):
        event.app.exit(exception=KeyboardInterrupt)

    def prompt(text: str) -> str:
        return ask(text, key_bindings=keys)

    repl.renderer.pause()
    repl.keys_off(take=False)
    try:
        repl.say(f"● MCP server {question.server} asks: {question.message}", "bold yellow")
        if question.url:
            repl.say(f"  it asks you to open {question.url}")
            answer = prompt("  done? [y]es · [n]o › ").strip().lower()
            return Reply(ACCEPT if answer in ("y", "yes") else DECLINE)
        repl.say("  (Enter leaves an optional field empty · Ctrl-D declines · Esc or Ctrl-C cancels)", "dim")
        content = {}
        for field in question.fields:
            label = field_label(field)
            while True:
                text = prompt(label)
                if not text.strip():
                    if field.required:
                        continue
                    break
                try:
                    content[field.name] = parse_value(field, text)
                    break
                except ValueError as exc:
                    repl.say(f"  {field.name}: {exc}", "yellow")
        return Reply(ACCEPT, content)
    except EOFError:
        return Reply(DECLINE)
    except KeyboardInterrupt:
        return Reply(CANCEL)
    finally:
        repl.keys_on()
        repl.renderer.resume()


def field_label(field) -> str:
    """`  minutes (a whole number, required: how long) › `."""
    kind = {"integer": "a whole number", "number": "a number", "boolean": "yes or no"}.get(field.kind, "text")
    if field.choices:
        kind = ("any of " if field.kind == "array" else "one of ") + ", ".join(field.choices)
    about = field.description or (field.title if field.title.lower() != field.name.lower() else "")
    flags = ", required" if field.required else ""
    default = f", default {field.default}" if field.default is not None else ""
    return f"  {field.name} ({kind}{flags}{default}{': ' + about if about else ''}) › "
