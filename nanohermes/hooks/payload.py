"""A call as a hook sees it, and a hook's `updatedInput` as the call's arguments again (pure).

`tool_input` carries NanoHermes's argument names and Claude Code's side by side where a script
looks for them: edit_file's `old_text`/`new_text` also as `old_string`/`new_string`, every
path also as an absolute `file_path`, run_command's `reason`/`background` also as
`description`/`run_in_background`. One key differs in meaning: a command's `timeout` is seconds
to NanoHermes and milliseconds to Claude Code, so a hook told `Bash` gets milliseconds.

`tool_response` (PostToolUse) carries NanoHermes's `output`, `ok` and the result's facts, and for
a command Claude Code's `stdout`, `stderr`, `interrupted` and `isImage`, for a file write or
edit its `filePath` and `success`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from nanohermes.hooks.vocabulary import MCP_PREFIX

# The session's permission mode as Claude Code names its own (`permission_mode` in every payload).
PERMISSION_MODES = {"ask": "default", "plan": "plan", "accept-edits": "acceptEdits", "auto": "bypassPermissions"}
# (Claude Code's key, NanoHermes's key) per tool: the same value under both names.
ALIASES: dict[str, tuple[tuple[str, str], ...]] = {
    "edit_file": (("old_string", "old_text"), ("new_string", "new_text")),
    "run_command": (("description", "reason"), ("run_in_background", "background")),
    "grep": (("-i", "ignore_case"),),
    "task_output": (("task_id", "id"),),
    "task_stop": (("task_id", "id"),),
}
HELPER_TYPE = "general-purpose"  # what a `task` helper is, in Claude Code's words (its subagent_type)
MS = 1000  # Claude Code's Bash timeout is in milliseconds, run_command's in seconds


def parsed_call(name: str, arguments: str) -> tuple[str, dict]:
    """(the tool's name as hooks know it, its arguments): an MCP call as `mcp:server.tool` with
    that tool's own arguments; arguments that are no JSON object as {"arguments": the text}."""
    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        args = None
    if not isinstance(args, dict):
        return name, {"arguments": arguments}
    if name == "mcp" and "." in str(args.get("name", "")):
        inner = args.get("arguments")
        return f"{MCP_PREFIX}{args['name']}", inner if isinstance(inner, dict) else {}
    return name, args


def tool_input(name: str, args: dict, workspace: Path, told: str) -> dict:
    """The call's arguments as the hook told `told` (its name for the tool) reads them."""
    view = dict(args)
    if isinstance(args.get("path"), str) and "file_path" not in args:
        view["file_path"] = os.path.normpath(workspace / os.path.expanduser(args["path"]))
    for claude, ours in ALIASES.get(name, ()):
        if ours in args and claude not in args:
            view[claude] = args[ours]
    if name == "task":
        view.setdefault("subagent_type", HELPER_TYPE)
    if told == "MultiEdit" and "old_text" in args:
        view["edits"] = [{k: view.get(k) for k in ("old_string", "new_string", "replace_all") if k in view}]
    if told == "Bash" and isinstance(args.get("timeout"), int | float) and not isinstance(args["timeout"], bool):
        view["timeout"] = args["timeout"] * MS
    return view


def tool_response(name: str, output: str, ok: bool, facts: dict, streams: tuple[str, str] | None) -> dict:
    """What a finished call gave, for PostToolUse: NanoHermes's fields and Claude Code's."""
    response = {"output": output, "ok": ok, **facts}
    if name == "run_command":
        stdout, stderr = streams if streams is not None else (output, "")
        interrupted = bool(facts.get("interrupted"))
        response |= {"stdout": stdout, "stderr": stderr, "interrupted": interrupted, "isImage": False}
    elif name in ("write_file", "edit_file"):
        response |= {"filePath": facts.get("path") or "", "success": ok}
    return response


def arguments_from(name: str, updated: dict, sent: dict, told: str) -> dict:
    """A hook's `updatedInput` (it replaces the whole input, as in Claude Code) as the tool's
    arguments: a key it changed under either name wins; derived keys it left alone are dropped."""
    if name.startswith(MCP_PREFIX):
        return {"name": name[len(MCP_PREFIX) :], "arguments": updated}
    pairs = [*ALIASES.get(name, ()), ("file_path", "path")]
    derived = {claude for claude, _ in pairs} | {"subagent_type", "edits"}
    args = {key: value for key, value in updated.items() if key not in derived}
    for claude, ours in pairs:
        if claude in updated and updated[claude] != sent.get(claude):
            args[ours] = updated[claude]  # the hook changed Claude's name for it: that is the change
        elif ours not in updated and claude in updated:
            args[ours] = updated[claude]
    if told == "Bash" and isinstance(args.get("timeout"), int | float) and not isinstance(args["timeout"], bool):
        args["timeout"] = args["timeout"] / MS
    return args
