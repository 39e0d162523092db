"""Replaying a session file into the state a resumed session starts from.

The file is read line by line and never held whole: a session of hundreds of MB is mostly
full tool outputs kept for `recall`, and those stay in the file. The state holds where each
one is (StoredOutput) and reads it back only when recall asks; what is held is the working
set. (Reading the whole file, then splitting it into lines, held it twice: 900 MB for a
300 MB session, scripts/measure_resume_memory.py.)

Every event is checked for the shape the loop relies on: a message of the wrong shape is
corruption, reported with its line and the file left untouched, never a crash later on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from nanohermes.calls import ResultFacts
from nanohermes.errors import SessionError
from nanohermes.fileio import open_regular
from nanohermes.memory.block import attach_block
from nanohermes.synthetic import tagged
from nanohermes.text import with_attachment

ROLES = ("user", "assistant", "tool", "system")
TITLE_MAX_CHARS = 200  # stored; listings cut it to their column


def title_of(text: str) -> str:
    """A session's title: its first request on one line, cut."""
    return " ".join(str(text).split())[:TITLE_MAX_CHARS]


def first_line(content) -> str:
    """A request's first non-empty line, cut: how a picker names it."""
    text = content if isinstance(content, str) else ""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:TITLE_MAX_CHARS]


@dataclass(frozen=True)
class StoredOutput:
    """A tool output left in the session file: the line it is on, read back on demand."""

    path: Path
    offset: int
    length: int

    def read(self) -> str:
        with open_regular(self.path) as f:
            f.seek(self.offset)
            event = json.loads(f.read(self.length).decode("utf-8"))
        if event.get("type") == "tool_output":
            return str(event["full"])
        return str(event["message"].get("content") or "")


@dataclass(frozen=True)
class Prompt:
    """A request the user made: its serial in the file (1, 2, …; never reused, a rewound one
    keeps its number), where its event starts, and its first line."""

    serial: int
    offset: int
    line: str


@dataclass
class SessionState:
    """What replaying a session file gives back."""

    messages: list[dict] = field(default_factory=list)  # the working set, system excluded
    # tool call id -> its full output (for recall): text, or where it is in the file
    outputs: dict[str, str | StoredOutput] = field(default_factory=dict)
    facts: dict[str, ResultFacts] = field(default_factory=dict)  # tool call id -> what its result said
    total_messages: int = 0
    cut_or_cleared: bool = False  # some output was clamped or compacted away: recall has a use
    workspace: str | None = None  # where the session was started (None in files from before workspaces were recorded)
    title: str | None = None  # the first request
    prompts: list[Prompt] = field(default_factory=list)  # the user's requests in the conversation, oldest first
    prompt_serial: int = 0  # user requests recorded in the file, rewound ones too
    forked_from: str | None = None  # the session this one was forked from


def replay(f: BinaryIO, path: Path) -> tuple[SessionState, int | None]:
    """Rebuild state from the open file, line by line. Returns (state, byte offset of a torn
    last line, or the file's length when the last event only lost its newline, or None). Only
    an unterminated last line may be broken (a crash mid-write); anything else that does not
    parse, or has the wrong shape, is corruption."""
    state = SessionState()
    offset = 0
    for number, raw in enumerate(f, 1):
        start, offset = offset, offset + len(raw)
        whole = raw.endswith(b"\n")  # only the file's last line can lack its newline
        if not raw.strip():
            continue
        try:
            _apply(state, json.loads(raw.decode("utf-8")), StoredOutput(path, start, len(raw)))
        except (ValueError, KeyError, TypeError, AttributeError, IndexError):
            if not whole:
                return state, start
            raise SessionError(
                f"Session file {path} is corrupt at line {number}; it was left untouched. "
                "Move it away or start another session with --session NEW_NAME."
            ) from None
        if not whole:  # a complete event that lost its newline: keep it, re-terminate the line
            return state, offset
    return state, None


def checked_message(message) -> dict:
    """The message if it has the shape the loop relies on; TypeError else."""
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        raise TypeError("not a chat message")
    if not isinstance(message.get("content"), (str, list, type(None))):
        raise TypeError("content is neither text nor parts")
    calls = message.get("tool_calls")
    if calls is not None:
        if message["role"] != "assistant" or not isinstance(calls, list):
            raise TypeError("tool_calls is not a list of an assistant message")
        for call in calls:
            if not (
                isinstance(call, dict)
                and isinstance(call.get("id"), str)
                and isinstance(call.get("function"), dict)
                and isinstance(call["function"].get("name"), str)
            ):
                raise TypeError("a tool call without an id, a function or a name")
    if message["role"] == "tool" and not isinstance(message.get("tool_call_id"), str):
        raise TypeError("a tool result without its call's id")
    return message


def encode_working_set(before: list[dict], after: list[dict]) -> list:
    """`after` as indices into `before` (messages kept as they were) and new dicts."""
    index = {id(m): i for i, m in enumerate(before)}
    return [index.get(id(m), m) for m in after]


def _apply(state: SessionState, event: dict, where: StoredOutput) -> None:
    """Raises KeyError/TypeError/AttributeError/IndexError on an event of the wrong shape."""
    kind = event["type"]
    if kind == "message":
        _apply_message(state, event, where)
    elif kind == "tool_output":
        if not isinstance(event["full"], str):
            raise TypeError("a tool output that is not text")
        state.outputs[str(event["id"])] = where
    elif kind == "compaction":
        before = state.messages
        state.messages = [
            before[item] if isinstance(item, int) else checked_message(item) for item in event["messages"]
        ]
        state.cut_or_cleared = True
    elif kind == "context":
        state.messages = [checked_message(m) for m in event["messages"]]
        state.cut_or_cleared = True
    elif kind == "reset":
        state.messages = []
    elif kind == "rewind":  # /rewind: the conversation as it was before a request
        state.messages = [
            state.messages[item] if isinstance(item, int) else checked_message(item) for item in event["messages"]
        ]
        del state.prompts[int(event["prompts"]) :]
    elif kind == "meta":
        state.workspace = event.get("workspace")
        state.forked_from = event.get("forked_from")
    elif kind == "title":
        state.title = str(event["title"])


def _apply_message(state: SessionState, event: dict, where: StoredOutput) -> None:
    message = checked_message(event["message"])
    if state.title is None and message["role"] == "user":  # files without a title event
        state.title = title_of(message.get("content") or "")
    if event.get("memory") or event.get("files"):
        content = with_attachment(str(message.get("content") or ""), str(event.get("files") or ""))
        message = {**message, "content": attach_block(content, str(event.get("memory") or ""))}
    message = tagged(message, event.get("synthetic") and str(event["synthetic"]))
    if message["role"] == "user" and not event.get("synthetic"):
        state.prompt_serial += 1
        state.prompts.append(Prompt(state.prompt_serial, where.offset, first_line(message.get("content"))))
    state.messages.append(message)
    state.total_messages += 1
    if message["role"] == "tool":  # what recall returns unless a fuller output follows
        call_id = message["tool_call_id"]
        state.outputs.setdefault(call_id, where)
        if event.get("facts"):
            state.facts[call_id] = ResultFacts.from_dict(event["facts"])
