"""MCP in the REPL: a server's prompts as slash commands (`/mcp:server:prompt key=value …` or
`/server:prompt …`, and `/mcp` to list them), and a server's question (elicitation) asked at the terminal.

A prompt is text the server wrote, run because the user typed its command: it is sent as the
user's message. A question is asked field by field; what is typed is checked against the
field's type and asked again when it does not fit. Ctrl-D declines, Esc or Ctrl-C cancels.
"""

from __future__ import annotations

from nanohermes.errors import NanoHermesError
from nanohermes.mcp.prompts import PromptError, prompt_lines, prompt_text
from nanohermes.prompt.mentions import Mentions
from nanohermes.ui.command_table import FALLBACKS, handles


@handles("/mcp")
def _mcp(repl, arg: str) -> bool:
    hub = _hub(repl)
    if not arg.startswith(":"):
        for line in prompt_lines(hub):
            repl.say(line)
        return True
    target, _, rest = arg[1:].partition(" ")
    server, _, name = target.partition(":")
    try:
        text = prompt_text(hub, server, name, rest, spelled=f"/mcp:{server}:{name}")
    except PromptError as exc:
        raise PromptError(f"{exc}; /mcp lists the prompts") from None
    repl.say(f"· prompt {server}:{name} ({len(text):,} chars) sent as your message", "dim")
    repl.turn(text, Mentions(rest))  # the server's text names no file to attach: only what was typed
    return True


def prompt_command(repl, line: str) -> bool | None:
    """`/server:prompt ARGUMENTS` as `/mcp:server:prompt` is (None: not a configured server's)."""
    from nanohermes.mcp.prompts import find_prompt_command

    configured = repl.runtime.configured
    hub = configured.mcp if configured is not None else None
    found = find_prompt_command(line, hub.servers) if hub is not None else None
    if found is None:
        return None
    server, name, typed = found
    text = prompt_text(hub, server, name, typed)
    repl.say(f"· prompt {server}:{name} ({len(text):,} chars) sent as your message", "dim")
    repl.turn(text, Mentions(typed))  # the server's text names no file to attach: only what was typed
    return True


FALLBACKS.append(prompt_command)


def _hub(repl):
    configured = repl.runtime.configured
    if configured is None or configured.mcp is None:
        raise NanoHermesError("no MCP servers configured ([mcp.servers.NAME] in config.toml)")
    return configured.mcp


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
