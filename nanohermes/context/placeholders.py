"""Placeholders: old, large tool outputs become one line each, cleared in one batch at a
compaction (never one per step: each change rewrites the prompt from that point on). No model
call; the message stays, so pairs stay valid, and the line says how to get the output back
with `recall`. Long argument values of old tool calls (a write_file body, an edit's old and
new text) shrink the same way: the file on disk has them, and so do the files attached to a
user message the model has acted on since (prompt/mentions.py): one line each, read_file reads
them again. So do the images old messages carry (context/images.py): a line each says what was
there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from nanohermes.calls import NO_FACTS, ResultFacts, ToolCall, describe_call, tool_calls_by_id
from nanohermes.context.images import IMAGES, cleared_lines, without_images
from nanohermes.memory.block import BLOCK_END, BLOCK_START
from nanohermes.text import FILES_HEADER, POINTS_TO_ATTACHMENT

PLACEHOLDER_PREFIX = "[old tool output cleared to save context: "
# How much of a long argument value stays in an old tool call (enough to recognise it).
ARGUMENT_HEAD_CHARS = 160
# What stands for the files attached to a request once cleared, above each one's first line.
ATTACHMENT_CLEARED = "[the files attached here were cleared to save context; read_file reads them again:]"


def placeholder_text(call: ToolCall | None, call_id: str, content: str, facts: ResultFacts = NO_FACTS) -> str:
    """`[old tool output cleared to save context: read_file path=a.py — 18,342 chars; recall(id="call_1")
    returns it]`."""
    what = describe_call(call) if call else "tool result"
    details = f"{len(content):,} chars"
    if facts.exit_code is not None:
        details += f", exit code {facts.exit_code}"
    return f'{PLACEHOLDER_PREFIX}{what} — {details}; recall(id="{call_id}") returns it]'


def shrink_arguments(raw, max_chars: int) -> str | None:
    """The arguments JSON with string values over `max_chars` cut to their head and a note, or
    None if nothing was long (or the arguments are not a JSON object)."""
    try:
        args = json.loads(raw)
    except (json.JSONDecodeError, TypeError):
        return None
    if not isinstance(args, dict):
        return None
    changed = False
    for key, value in args.items():
        if isinstance(value, str) and len(value) > max_chars:
            head = min(ARGUMENT_HEAD_CHARS, max_chars)
            args[key] = value[:head] + f"…[{len(value) - head:,} more chars cleared to save context]"
            changed = True
    return json.dumps(args, ensure_ascii=False) if changed else None


def shrink_tool_calls(message: dict, max_chars: int) -> dict:
    """The assistant message with long argument values shrunk, or the message itself."""
    calls = message.get("tool_calls")
    if not calls:
        return message
    new_calls = []
    for call in calls:
        function = call.get("function") or {}
        shrunk = shrink_arguments(function.get("arguments"), max_chars)
        new_calls.append(call if shrunk is None else {**call, "function": {**function, "arguments": shrunk}})
    return {**message, "tool_calls": new_calls} if any(a is not b for a, b in zip(new_calls, calls)) else message


def clear_attachment(message: dict, min_chars: int) -> dict:
    """A user message with the files attached to it (text.FILES_HEADER) over `min_chars` cut to
    each one's first line (`read_file a.py lines 1–120 of 300`), or the message itself. The
    user's words, a !command's output before them and the memory block after them stay.

    The parts are read_file pages (every line numbered, so never a blank one) and directory
    listings, joined by blank lines: a blank line always starts the next part."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, str):
        return message
    start = content.rfind(f"\n\n{FILES_HEADER}\n\n")
    if start < 0:
        return message
    end = len(content)
    if content.endswith(BLOCK_END) and (memory := content.rfind(f"\n\n{BLOCK_START}")) > start:
        end = memory
    files = content[start + len(FILES_HEADER) + 4 : end]
    if len(files) <= min_chars:  # a small file stays verbatim: a line about it saves little
        return message
    heads = [part.split("\n", 1)[0] for part in files.split("\n\n")] + cleared_lines(files)
    return {**message, "content": "\n".join([content[:start] + "\n", ATTACHMENT_CLEARED, *heads]) + content[end:]}


def points_to_attachment(messages: list[dict]) -> bool:
    """A read_file result among `messages` points back to the files attached to a request."""
    return any(m.get("role") == "tool" and str(m.get("content")).endswith(POINTS_TO_ATTACHMENT) for m in messages)


def clear_old_outputs(
    messages: list[dict],
    end: int,
    min_chars: int,
    facts: Mapping[str, ResultFacts] | None = None,
    argument_chars: int | None = None,
) -> tuple[list[dict], list[str]]:
    """Replace tool results over `min_chars` in messages[1:end] with placeholders, shrink tool-call
    argument values over `argument_chars` (default `min_chars`) and files attached to user messages
    there (not while a result kept after `end` points back to them); clear every image there (a
    line each). Returns (new list, ids of the results replaced); the rest of the list, and every
    untouched dict, is reused."""
    attachments = not points_to_attachment(messages[end:])
    calls = tool_calls_by_id(messages[:end])
    out, replaced = [messages[0]] if messages else [], []
    for message in messages[1:end]:
        role, content = message.get("role"), message.get("content")
        if (
            role == "tool"
            and isinstance(content, str)
            and len(content) > min_chars
            and not content.startswith(PLACEHOLDER_PREFIX)
        ):
            call_id = str(message.get("tool_call_id"))
            text = placeholder_text(calls.get(call_id), call_id, content, (facts or {}).get(call_id, NO_FACTS))
            new = {**message, "content": "\n".join([text, *cleared_lines(content)])}  # what images it had
            replaced.append(call_id)
        elif role == "assistant":
            new = shrink_tool_calls(message, min_chars if argument_chars is None else argument_chars)
        elif role == "user" and attachments:
            new = clear_attachment(message, min_chars)
        else:
            new = message
        out.append(without_images(new) if IMAGES in new else new)  # an image is never small: 255 tokens at least
    out.extend(messages[end:])
    return out, replaced
