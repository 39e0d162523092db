"""Tool calls as they appear in chat messages, and the one way to describe them in a line.

The loop, the context engine (placeholders, summaries, digests) and the UI all name a call the
same way: `read_file path=src/x.py`. What a *result* says beyond its text (exit code, path,
bytes cut) travels beside it as ResultFacts, so nothing here parses a tool's output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields

# The arguments that say what a call acted on, in the order they are shown.
KEY_ARGUMENTS = (
    *("pattern", "path", "command", "url", "glob", "id", "name", "offset", "limit", "description"),
    *("query", "kind", "text"),  # recall, web_search, remember: named, not their raw JSON
)
# A key argument longer than this is cut in descriptions (commands can be whole scripts).
KEY_ARGUMENT_MAX_CHARS = 120
# Tools that change files (their `path` is a file changed) and the one that reads them.
WRITING_TOOLS = ("write_file", "edit_file")
READING_TOOLS = ("read_file",)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict  # {} when the model sent something that is not a JSON object
    raw_arguments: str

    @classmethod
    def of(cls, name: str, raw_arguments, call_id: str = "") -> ToolCall:
        return parse_tool_call({"id": call_id, "function": {"name": name, "arguments": raw_arguments}})


@dataclass(frozen=True)
class ResultFacts:
    """What a tool result says beyond its text, set by the tool and the clamp, read by whoever
    describes the result (placeholders, summary input, the UI). JSON-serialisable."""

    path: str | None = None  # the file or directory acted on, as shown to the model
    changed: bool = False  # a file's content changed
    exit_code: int | None = None  # run_command
    timed_out: bool = False
    cut_bytes: int = 0  # bytes the per-result clamp dropped
    found: str = ""  # what the call found or did, in a few words: "lines 1–50 of 120", "3 matches in 2 files"
    tail: str = ""  # run_command: its last output lines as a terminal showed them (stdout and stderr interleaved)
    output_lines: int = 0  # run_command: lines of output in all, so a shown tail can say how many more there were
    interrupted: bool = False  # stopped by the user (Ctrl-C, Esc) before it finished; what it had is kept
    blocked: str = ""  # run_command: what the sandbox blocked, in plain words (also when it exited 0)

    @property
    def failed(self) -> bool:
        """A command that did not succeed: it exited non-zero, timed out, was killed, was interrupted, or
        the sandbox blocked some of it (even when it exited 0: `curl … | head`)."""
        return self.timed_out or self.interrupted or bool(self.exit_code) or bool(self.blocked)

    def to_dict(self) -> dict:
        """The facts that differ from the defaults (an exit code of 0 is a fact, kept)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != f.default}

    @classmethod
    def from_dict(cls, data) -> ResultFacts:
        if not isinstance(data, dict):
            return cls()
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


NO_FACTS = ResultFacts()


def parse_tool_call(call: dict) -> ToolCall:
    function = call.get("function") or {}
    raw = function.get("arguments") or ""
    if isinstance(raw, dict):
        args, raw = raw, json.dumps(raw, ensure_ascii=False)
    else:
        try:
            args = json.loads(raw) if str(raw).strip() else {}
        except (json.JSONDecodeError, TypeError):
            args = {}
    return ToolCall(
        str(call.get("id") or ""), str(function.get("name") or "?"), args if isinstance(args, dict) else {}, str(raw)
    )


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


def describe_call(call: ToolCall, max_chars: int | None = None) -> str:
    """`read_file path=src/x.py`; cut to max_chars when given."""
    args = key_arguments(call)
    text = f"{call.name} {args}" if args else call.name
    return text if max_chars is None or len(text) <= max_chars else text[: max_chars - 1] + "…"


def action_title(tool_name: str, args: dict) -> str:
    """`Run a command`, `Edit src/x.py`: what the user is asked to allow (a terminal shows it
    neutralized, ui/escape.py)."""
    path = str(args.get("path", ""))
    titles = {"run_command": "Run a command", "edit_file": f"Edit {path}", "write_file": f"Write {path}"}
    if tool_name == "mcp":
        return f"Call MCP tool {args.get('name', '')}"
    return titles.get(tool_name, f"Allow {tool_name}")


def last_line(content: str) -> str:
    for line in reversed(content.splitlines()):
        if line.strip():
            return one_line(line, 160)
    return ""


def describe_result(call: ToolCall | None, content: str, facts: ResultFacts = NO_FACTS) -> str:
    """`[run_command command=pytest -q → 18,342 chars, exit code 1, last line: 2 failed]`.

    A failing command keeps its last line: that is where the error summary is."""
    what = describe_call(call) if call else "tool result"
    details = [f"{len(content):,} chars"]
    if facts.exit_code is not None:
        details.append(f"exit code {facts.exit_code}")
        if facts.exit_code != 0 and last_line(content):
            details.append(f"last line: {last_line(content)}")
    return f"[{what} → {', '.join(details)}]"


def _paths(messages: list[dict], tools: tuple[str, ...]) -> list[str]:
    paths: list[str] = []
    for call in tool_calls_by_id(messages).values():
        path = call.arguments.get("path")
        if call.name in tools and isinstance(path, str) and path not in paths:
            paths.append(path)
    return paths


def files_touched(messages: list[dict]) -> list[str]:
    """Paths given to write_file / edit_file, in first-touched order."""
    return _paths(messages, WRITING_TOOLS)


def files_read(messages: list[dict]) -> list[str]:
    """Paths given to read_file, in first-read order."""
    return _paths(messages, READING_TOOLS)
