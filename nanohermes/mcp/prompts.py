"""A server's prompt as a slash command, the same in every front end: `/server:prompt ARGUMENTS`
(the REPL's `/mcp:server:prompt` too) in the REPL, a `-p` task and an editor's prompt box.

A prompt is text the server wrote, sent as the user's message because the user typed its
command. Its arguments are `key=value` words; the other words fill its required arguments not
named, in the prompt's order, the last taking what is left (`/git:commit fix the login bug`).
"""

from __future__ import annotations

import shlex

from nanohermes.errors import NanoHermesError
from nanohermes.mcp.listing import one_line, resource_text
from nanohermes.mcp.toolcache import McpPromptInfo

PROMPTS_LISTED = 50  # a server's prompts in /mcp's list; one with more is a catalogue
REPL_PREFIX = "mcp:"  # the REPL's spelling: /mcp:server:prompt
ERROR_CHARS = 300  # a server's error, as shown


class PromptError(NanoHermesError):
    """A prompt command that cannot run as typed; the message says how to type it."""


def find_prompt_command(text: str, servers) -> tuple[str, str, str] | None:
    """(server, prompt, what follows) when `text` is `/server:prompt …` or `/mcp:server:prompt …`
    for one of `servers`; None for anything else (a path like /usr/bin, a custom command)."""
    if not text.startswith("/"):
        return None
    head, _, rest = text[1:].strip().partition(" ")
    head, newline, after = head.partition("\n")
    typed = f"{after} {rest}".strip() if newline else rest.strip()
    if head.startswith(REPL_PREFIX) and head.count(":") == 2:
        head = head[len(REPL_PREFIX) :]
    server, colon, name = head.partition(":")
    if not colon or not name or ":" in name or server not in servers:
        return None
    return server, name, typed


def command_name(server: str, prompt: str) -> str:
    """What an editor lists (without the slash): `server:prompt`."""
    return f"{server}:{prompt}"


def usage_hint(prompt: McpPromptInfo) -> str:
    """`path=… [focus=…]`: its arguments, the optional ones in brackets."""
    return " ".join(f"{a.name}=…" if a.required else f"[{a.name}=…]" for a in prompt.arguments)


def arguments_for(prompt: McpPromptInfo, typed: str) -> dict[str, str]:
    """The prompt's arguments from what was typed (the module's docstring says how)."""
    try:
        words = shlex.split(typed)
    except ValueError as exc:
        raise PromptError(f"cannot read the arguments: {exc}") from None
    known = {a.name for a in prompt.arguments}
    given = {}
    loose = []
    for word in words:
        key, equals, value = word.partition("=")
        if equals and key in known:
            given[key] = value
        else:
            loose.append(word)
    free = [a.name for a in prompt.arguments if a.required and a.name not in given]
    for position, name in enumerate(free):
        if position >= len(loose):
            break
        given[name] = " ".join(loose[position:]) if position == len(free) - 1 else loose[position]
    return given


def prompt_text(hub, server: str, name: str, typed: str, spelled: str = "") -> str:
    """The prompt's messages as one text (non-text parts named); a PromptError says what is missing.
    `spelled`: the command as the user's front end writes it (default `/server:prompt`)."""
    from mcp import MCPError

    from nanohermes.mcp.hub import McpCallTimeout, McpUnavailable

    spelled = spelled or f"/{command_name(server, name)}"
    if server not in hub.servers:
        raise PromptError(f"no MCP server {server!r}")
    try:
        prompt = next((p for p in hub.prompts(server) if p.name == name), None)
        if prompt is None:
            raise PromptError(f"{server} has no prompt {name!r}")
        given = arguments_for(prompt, typed)
        missing = [a.name for a in prompt.arguments if a.required and a.name not in given]
        if missing:
            words = " ".join(f"{a.name}=…" for a in prompt.arguments)
            raise PromptError(f"{spelled} needs {', '.join(missing)}: {spelled} {words}")
        got = hub.get_prompt(server, name, given)
    except (McpUnavailable, McpCallTimeout, MCPError) as exc:
        raise PromptError(f"MCP server {server}: {one_line(str(exc), ERROR_CHARS)}") from None
    parts = [message_text(m.content) for m in got.messages]
    return "\n\n".join(p for p in parts if p) or f"(the prompt {name} of {server} is empty)"


def message_text(content) -> str:
    kind = getattr(content, "type", "")
    if kind == "text":
        return content.text
    if kind == "resource":
        return resource_text(content.resource)
    return f"[{kind or 'unknown'} content: not shown]"


def prompt_lines(hub) -> list[str]:
    """Each server's prompts as the REPL commands that run them (starting the servers)."""
    from nanohermes.mcp.hub import McpCallTimeout, McpUnavailable

    lines = []
    for server in hub.servers:
        try:
            prompts = hub.prompts(server)
        except (McpUnavailable, McpCallTimeout) as exc:
            lines.append(f"✗ {server}: {one_line(str(exc), ERROR_CHARS)}")
            continue
        for prompt in prompts[:PROMPTS_LISTED]:
            about = one_line(prompt.description, 100)
            command = one_line(f"/{REPL_PREFIX}{server}:{prompt.name} {usage_hint(prompt)}", 200)
            lines.append(command + (f" — {about}" if about else ""))
    return lines or ["no MCP server offers prompts"]
