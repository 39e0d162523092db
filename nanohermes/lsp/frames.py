"""LSP's base protocol: JSON-RPC messages framed by a `Content-Length` header, read within bounds.

A language server is a program the user configured, reading files the model wrote: what it sends
is read as from outside. A header line, the header count and a message's size are bounded, and the
JSON's nesting (bounded.py): past any bound the stream is broken (FrameError), never a hang on an
endless line or a traceback from a parser.
"""

from __future__ import annotations

import json
import re
from typing import BinaryIO

from nanohermes.bounded import parse_json

MAX_HEADER_LINE = 1_024  # `Content-Length: 123` and `Content-Type: …; charset=utf-8` are a few dozen bytes
MAX_HEADERS = 16  # LSP defines two headers
# The diagnostics of a file edit_file may change (4 MB) fit in a few MB; a server's other messages
# (logs, progress) are small. More is a broken or hostile stream.
MAX_MESSAGE_BYTES = 16 * 1_048_576
_HEADER_NAME = re.compile(rb"^[A-Za-z0-9-]+$")  # a header's name is a token: `Content-Length`, `Content-Type`


class FrameError(Exception):
    """The server's output is not LSP's framing (or passes a bound): why, in words."""


def encode(message: dict) -> bytes:
    """One message with its header. The text in it must be valid Unicode (no lone surrogates)."""
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(stream: BinaryIO) -> dict | None:
    """The next message from `stream`; None at its end between messages; FrameError otherwise."""
    length = _content_length(stream)
    if length is None:
        return None
    body = stream.read(length)
    if len(body) < length:
        raise FrameError(f"its output ended inside a message ({len(body)} of {length} bytes)")
    try:
        message = parse_json(body)
    except ValueError as exc:
        raise FrameError(f"it sent a message that is not JSON ({exc})") from None
    if not isinstance(message, dict):
        raise FrameError("it sent a JSON message that is not an object")
    return message


def _content_length(stream: BinaryIO) -> int | None:
    """The header's Content-Length, the blank line after it read; None at the stream's end."""
    length, lines = None, 0
    while True:
        line = stream.readline(MAX_HEADER_LINE + 1)
        if not line:
            if lines:
                raise FrameError("its output ended inside a header")
            return None
        lines += 1
        if len(line) > MAX_HEADER_LINE or lines > MAX_HEADERS:
            raise FrameError("it sent a header past the protocol's size (is it printing to stdout?)")
        if line in (b"\r\n", b"\n"):
            break
        name, colon, value = line.partition(b":")
        if not colon or not _HEADER_NAME.match(name):
            raise FrameError(f"it sent {_shown(line)} where a header belongs (is it printing to stdout?)")
        if name.strip().lower() == b"content-length":
            length = _number(value)
    if length is None:
        raise FrameError("it sent a header without Content-Length")
    if length > MAX_MESSAGE_BYTES:
        raise FrameError(f"it sent a message of {length:,} bytes, over the {MAX_MESSAGE_BYTES:,} read")
    return length


def _number(value: bytes) -> int:
    text = value.strip()
    if not text.isdigit() or len(text) > 18:  # past 18 digits it is no size any reader could hold
        raise FrameError(f"it sent Content-Length {_shown(text)}, not a size")
    return int(text)


def _shown(data: bytes) -> str:
    return repr(data[:60].decode("utf-8", "replace"))
