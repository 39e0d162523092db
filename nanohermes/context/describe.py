"""One-line descriptions of tool calls and results, from the call's name and arguments.

Tool results start with a header naming what they acted on, but a model-written or clamped
result may not: the assistant message that declared the call is the reliable source.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

# The arguments that say what a call acted on, in the order they are shown.
KEY_ARGUMENTS = ("pattern", "path", "command", "url", "glob", "id", "name", "offset", "limit")
# A key argument longer than this is cut in descriptions (commands can be whole scripts).
KEY_ARGUMENT_MAX_CHARS = 120
# Tools that change files; their `path` is a "file touched".
WRITING_TOOLS = ("write_file", "edit_file")
_EXIT_CODE = re.compile(r"exit code:? (-?\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict  # {} when the model sent something that is not a JSON object
    raw_arguments: str


def parse_tool_call(call: dict) -> ToolCall:
    function = call.get("function") or {}
    raw = function.get("arguments") or ""
    if isinstance(raw, dict):
        args, raw = raw, json.dumps(raw, ensure_ascii=False)
    else:
        try:
            args = json.loads(raw) if raw.strip() else {}
        except (json.JSONDecodeError, AttributeError):
            args = {}
    return ToolCall(str(call.get("id") or ""), str(function.get("name") or "?"), args if isinstance(args, dict) else {}, str(raw))


def tool_calls_by_id(messages: list[dict]) -> dict[str, ToolCall]:
    """Every tool call declared by an assistant message, by id."""
    found: dict[str, ToolCall] = {}
    for m in messages:
        if m.get("role") == "assistant":
            for call in m.get("tool_calls") or ():
                parsed = parse_tool_call(call)
                found[parsed.id] = parsed
    return found


def one_line(text: str, max_chars: int = KEY_ARGUMENT_MAX_CHARS) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= max_chars else flat[: max_chars - 1] + "…"


def key_arguments(call: ToolCall) -> str:
    """`path=src/x.py offset=10` — what the call acted on, short enough for one line."""
    parts = [f"{k}={one_line(call.arguments[k])}" for k in KEY_ARGUMENTS if call.arguments.get(k) not in (None, "")]
    if not parts and call.raw_arguments.strip() not in ("", "{}"):
        parts.append(one_line(call.raw_arguments, 80))
    return " ".join(parts)


def describe_call(call: ToolCall) -> str:
    args = key_arguments(call)
    return f"{call.name} {args}" if args else call.name


def exit_code(content: str) -> int | None:
    """The exit code a run_command result reports in its header, if any."""
    match = _EXIT_CODE.search(content[:300])
    return int(match.group(1)) if match else None


def last_line(content: str) -> str:
    for line in reversed(content.splitlines()):
        if line.strip():
            return one_line(line, 160)
    return ""


def describe_result(call: ToolCall | None, content: str) -> str:
    """`[run_command command=pytest -q → 18,342 chars, exit code 1, last line: 2 failed]`.

    A failing command keeps its last line: that is where the error summary is."""
    what = describe_call(call) if call else "tool result"
    facts = [f"{len(content):,} chars"]
    code = exit_code(content)
    if code is not None:
        facts.append(f"exit code {code}")
        if code != 0 and last_line(content):
            facts.append(f"last line: {last_line(content)}")
    return f"[{what} → {', '.join(facts)}]"


def files_touched(messages: list[dict]) -> list[str]:
    """Paths given to write_file / edit_file, in first-touched order."""
    paths: list[str] = []
    for call in tool_calls_by_id(messages).values():
        path = call.arguments.get("path")
        if call.name in WRITING_TOOLS and isinstance(path, str) and path not in paths:
            paths.append(path)
    return paths
