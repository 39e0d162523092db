"""Images in the conversation, as plain data. Pure.

A message that carries images keeps its text in `content` (every reader of text still reads a
string) and its images beside it under IMAGES: a list of entries, each naming the stored bytes
by their SHA-256 (`ref`, storage/images.py) with its type, size in pixels and name. The entry is
what the working set, the session and the context engine see; the bytes reach only the wire,
where `on_the_wire` turns entries into the chat-completions image content parts:
`{"type": "image_url", "image_url": {"url": "data:image/png;base64,…"}}`.

Chat completions take images in user messages only (a tool result is text), so the image a
read_file call returned travels in the user message after its block of results (merged into
the user message that follows the block, when one does: strict templates want no two user
messages in a row).

An image is counted by OpenAI's published formula (`image_tokens`), in tokens and, for the char
budget, at ASCII_CHARS_PER_IMAGE_TOKEN chars a token: never by its base64, which the server
decodes and never tokenises. An old image is cleared like an old output: a line says what it
was and that read_file reads it again.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from nanohermes.memory.block import BLOCK_END, BLOCK_START

IMAGES = "nanohermes_images"  # never sent as such: on_the_wire turns it into content parts
# What the chat-completions image part takes, by OpenAI's list (and every server that takes images):
# PNG, JPEG, WebP and non-animated GIF.
MIME_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
DataUrl = Callable[[str, str], "str | None"]  # (ref, mime) -> the stored bytes as a data: URL, None when gone

# OpenAI's formula for an image at detail "high" (the default, "auto", for the sizes sent here):
# scaled to fit a 2048 x 2048 square, then its shortest side to 768 px (only ever down), then
# 170 tokens per 512 px tile and 85 for the image. Other servers count their own way (Qwen2-VL a
# token per 28 x 28 patch, Gemma 3 a fixed 256); the token tracker learns the difference from the
# first usage report (context/tokens.py), as it does for a chat template.
FIT_SIDE = 2_048
SHORT_SIDE = 768
TILE_SIDE = 512
TOKENS_PER_TILE = 170
TOKENS_PER_IMAGE = 85
# The char budget counts an image as this many chars a token: the ratio it assumes of English and
# code (context/tokens.py: ASCII_CHARS_PER_TOKEN), so an image weighs what its tokens would in text.
ASCII_CHARS_PER_IMAGE_TOKEN = 4
CAPTION = "[The image{s} of the tool result{s} above ({ids}):]"
CLEARED = "[image {name} ({width}×{height}) cleared to save context; read_file reads it again]"
_CLEARED_LINE = re.compile(
    re.escape(CLEARED).replace(r"\{name\}", ".+").replace(r"\{width\}", r"\d+").replace(r"\{height\}", r"\d+")
)
GONE = "[image {name} is no longer stored (its session's files were removed); read_file reads it again]"


def image_tokens(width: int, height: int) -> int:
    """What OpenAI counts for an image of `width` x `height` pixels (800 x 600: 765)."""
    width, height = max(1, width), max(1, height)
    if max(width, height) > FIT_SIDE:
        scale = FIT_SIDE / max(width, height)
        width, height = max(1, int(width * scale)), max(1, int(height * scale))
    if min(width, height) > SHORT_SIDE:
        scale = SHORT_SIDE / min(width, height)
        width, height = max(1, int(width * scale)), max(1, int(height * scale))
    return TOKENS_PER_IMAGE + TOKENS_PER_TILE * math.ceil(width / TILE_SIDE) * math.ceil(height / TILE_SIDE)


def entry_tokens(entry: dict) -> int:
    return image_tokens(int(entry.get("width") or 1), int(entry.get("height") or 1))


def images_of(message: dict) -> list[dict]:
    """The image entries a message carries ([] for none)."""
    images = message.get(IMAGES)
    return [e for e in images if isinstance(e, dict)] if isinstance(images, list) else []


def tokens_of(message: dict) -> int:
    """The tokens of a message's images."""
    return sum(entry_tokens(e) for e in images_of(message))


def chars_of(message: dict) -> int:
    """A message's images as the char budget counts them."""
    return tokens_of(message) * ASCII_CHARS_PER_IMAGE_TOKEN


def count_images(messages: list[dict]) -> int:
    return sum(len(images_of(m)) for m in messages)


def without_images(message: dict, line: str = CLEARED) -> dict:
    """The message with its images cleared: a line each after its text, saying what it was."""
    images = images_of(message)
    if IMAGES not in message:
        return message
    rest = {k: v for k, v in message.items() if k != IMAGES}
    lines = "\n".join(line.format(**describe(e)) for e in images)
    content = rest.get("content")
    rest["content"] = with_lines(content if isinstance(content, str) else "", lines)
    return rest


def with_lines(text: str, lines: str) -> str:
    """`text` with `lines` after it, but before the memory block a user message ends with (its
    readers find it at the end: memory/block.py)."""
    if not text:
        return lines
    at = text.rfind(f"\n\n{BLOCK_START}")
    if at >= 0 and text.endswith(BLOCK_END):
        return f"{text[:at]}\n{lines}{text[at:]}"
    return f"{text}\n{lines}"


def apart_from_cleared(text: str) -> tuple[str, str]:
    """`text` without the lines that say an image was cleared, and those lines: a cut of the text keeps
    them whole (with_lines puts them back)."""
    lines = cleared_lines(text)
    if not lines:
        return text, ""
    said = set(lines)
    return "\n".join(line for line in text.split("\n") if line not in said), "\n".join(lines)


def cleared_lines(text: str) -> list[str]:
    """The lines of `text` that say an image was cleared (a placeholder that replaces the text keeps them)."""
    return [line for line in text.splitlines() if _CLEARED_LINE.fullmatch(line)]


def describe(entry: dict) -> dict:
    """An entry's fields for the lines that name it."""
    return {
        "name": str(entry.get("name") or "image"),
        "width": int(entry.get("width") or 0),
        "height": int(entry.get("height") or 0),
        "tokens": entry_tokens(entry),
    }


def cap_images(messages: list[dict], limit: int) -> tuple[list[dict], int]:
    """At most `limit` images in `messages`: the oldest beyond it cleared (a line each says so).
    Returns (the messages, how many were cleared); the list itself when none was."""
    over = count_images(messages) - limit
    if over <= 0:
        return messages, 0
    out, cleared = list(messages), 0
    for i, message in enumerate(messages):
        images = images_of(message)
        if cleared >= over or not images:
            continue
        n = min(len(images), over - cleared)
        out[i] = without_images({**message, IMAGES: images[:n]})
        if images[n:]:
            out[i][IMAGES] = images[n:]
        cleared += n
    return out, cleared


# ---------------------------------------------------------------- the wire


def on_the_wire(messages: list[dict], data_url: DataUrl) -> list[dict]:
    """The messages as chat completions take them: a user message's images as content parts
    after its text, a block of tool results' images in the user message after the block (merged
    into one that follows it). `data_url(ref, mime)`: the stored bytes as a data URL (None when
    gone: a line says so). Messages without images are passed through as they are."""
    if not any(IMAGES in m for m in messages):
        return messages
    out: list[dict] = []
    pending: list[tuple[str, dict]] = []  # (call id, entry) of the tool block so far
    for message in messages:
        role = message.get("role")
        if role != "tool" and pending:
            if role == "user":
                out.append(_user_parts(message, data_url, pending))
                pending = []
                continue
            out.append(_user_parts({"role": "user", "content": ""}, data_url, pending))
            pending = []
        if role == "tool":
            pending += [(str(message.get("tool_call_id")), e) for e in images_of(message)]
            out.append({k: v for k, v in message.items() if k != IMAGES})
        elif IMAGES in message:
            out.append(_user_parts(message, data_url, []))
        else:
            out.append(message)
    if pending:
        out.append(_user_parts({"role": "user", "content": ""}, data_url, pending))
    return out


def _user_parts(message: dict, data_url: DataUrl, before: list[tuple[str, dict]]) -> dict:
    """A user message as text and image parts: the images of the tool block before it first
    (after a caption naming their calls), then its own text, then its own images."""
    parts: list[dict] = []
    if before:
        ids = list(dict.fromkeys(call_id for call_id, _ in before))
        parts.append({"type": "text", "text": CAPTION.format(s="s" if len(ids) > 1 else "", ids=", ".join(ids))})
        parts += [_image_part(entry, data_url) for _, entry in before]
    content = message.get("content")
    if isinstance(content, str) and content:
        parts.append({"type": "text", "text": content})
    parts += [_image_part(entry, data_url) for entry in images_of(message)]
    rest = {k: v for k, v in message.items() if k != IMAGES}
    return {**rest, "role": "user", "content": parts}


def _image_part(entry: dict, data_url: DataUrl) -> dict:
    mime = entry.get("mime")
    url = data_url(str(entry.get("ref") or ""), mime) if mime in MIME_TYPES else None
    if url is None:
        return {"type": "text", "text": GONE.format(**describe(entry))}
    return {"type": "image_url", "image_url": {"url": url}}
