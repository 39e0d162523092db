"""One JSON-RPC frame from the editor, read within a size and parsed within a depth, or refused with
JSON-RPC's error while every session goes on being served.

A frame is one line. Past MAX_FRAME_BYTES it is read to its end but not kept (its head only, for
its id), and answered "Invalid Request"; a frame that is no JSON object, or nests past MAX_DEPTH
(a frame nested 100,000 deep made the parser's recursion fail and the relay stop reading), is
answered so too; one that is not JSON, "Parse error". The relay screens the editor's frames; a
session's process screens what the relay sends it (re-encoded, so up to RELAYED_FRAME_BYTES).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from dataclasses import dataclass

from nanohermes.bounded import TOO_DEEP, parse_json

MAX_FRAME_BYTES = 50 * 2**20  # one message: a prompt may embed whole files (the SDK's own default limit)
# The relay re-encodes what it forwards with JSON's \u escapes: a character of 2-4 UTF-8 bytes
# grows to at most 3 times its bytes; a session's process takes that much from the relay.
RELAYED_FRAME_BYTES = 3 * MAX_FRAME_BYTES + 2**20
READ_LIMIT = 2**20  # the stream's buffer: a longer line is read in pieces of this size
MAX_DEPTH = 64  # JSON nesting: the protocol's deepest message is a handful of levels (_meta may add a few)
HEAD_BYTES = 4_096  # kept of an oversized frame: its id is in its first bytes
PARSE_ERROR, INVALID_REQUEST = -32700, -32600  # JSON-RPC 2.0's codes for a frame that is no request
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')
_JSON_KINDS = {list: "an array (a batch)", str: "a string", int: "a number", float: "a number", bool: "a boolean"}
_JSON_KINDS[type(None)] = "null"

log = logging.getLogger("nanohermes.acp")


@dataclass(frozen=True)
class Oversized:
    """A frame longer than its reader takes: its size and first bytes."""

    size: int
    head: bytes


async def read_frame(reader: asyncio.StreamReader, limit: int | None = MAX_FRAME_BYTES) -> bytes | Oversized:
    """One newline-ended frame (b"" at the end of the stream), or Oversized past `limit` bytes
    (None: any length), read to its end without keeping more than its head."""
    parts: list[bytes] = []
    size = 0
    while True:
        try:
            piece, done = await reader.readuntil(b"\n"), True
        except asyncio.LimitOverrunError as exc:
            piece, done = await reader.readexactly(exc.consumed), False
        except asyncio.IncompleteReadError as exc:
            piece, done = exc.partial, True
        size += len(piece)
        if limit is None or size <= limit:
            parts.append(piece)
        elif len(parts) != 1 or len(parts[0]) > HEAD_BYTES:
            parts = [b"".join(parts)[:HEAD_BYTES]]  # what is over the limit is dropped as it comes
        if done:
            return b"".join(parts) if limit is None or size <= limit else Oversized(size, parts[0] if parts else b"")


@dataclass(frozen=True)
class Refusal:
    code: int
    message: str
    id: object = None  # the request's, when its frame names one where it can be read


def screen(frame: bytes | Oversized) -> dict | Refusal | None:
    """The frame's message (a JSON object), a Refusal, or None for a blank frame."""
    if isinstance(frame, Oversized):
        megabytes = f"{frame.size / 2**20:.0f} MB"
        limit = f"{MAX_FRAME_BYTES // 2**20} MB"
        return Refusal(
            INVALID_REQUEST,
            f"Invalid Request: the message is {megabytes}, over the {limit} one may be",
            _id(frame.head),
        )
    if not frame.strip():
        return None
    try:
        value = parse_json(frame)
    except json.JSONDecodeError as exc:
        if exc.msg == TOO_DEEP:
            return Refusal(
                INVALID_REQUEST, f"Invalid Request: the message nests deeper than {MAX_DEPTH} levels", _id(frame)
            )
        return Refusal(PARSE_ERROR, "Parse error: the frame is not JSON")
    except ValueError:  # not UTF-8
        return Refusal(PARSE_ERROR, "Parse error: the frame is not JSON")
    if not isinstance(value, dict):
        return Refusal(
            INVALID_REQUEST, f"Invalid Request: a message must be a JSON object, not {_JSON_KINDS[type(value)]}"
        )
    if frame.count(b"[") + frame.count(b"{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        return Refusal(
            INVALID_REQUEST, f"Invalid Request: the message nests deeper than {MAX_DEPTH} levels", value.get("id")
        )
    return value


def _deeper_than(value, limit: int) -> bool:
    """Whether a parsed JSON value nests past `limit` levels (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _id(head: bytes) -> object:
    """The request's id as its frame's first bytes name it (None when they do not)."""
    match = _ID.search(head[:HEAD_BYTES])
    if match is None:
        return None
    try:
        return json.loads(match.group(1))
    except ValueError:
        return None


def refuse(refusal: Refusal, writer) -> None:
    """JSON-RPC's error for a frame that is no request, and a line in the log."""
    log.warning("a frame was refused: %s", refusal.message)
    error = {"jsonrpc": "2.0", "id": refusal.id, "error": {"code": refusal.code, "message": refusal.message}}
    writer.write(json.dumps(error).encode() + b"\n")
