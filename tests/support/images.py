"""Images for the tests, made with Pillow (tiny ones, and one too large to send as it is), and the
checks a vision server makes of the content parts it is sent."""

from __future__ import annotations

import base64
import io
import re

from PIL import Image

DATA_URL = re.compile(r"data:(image/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/=]+)")
MAGIC = {"image/png": b"\x89PNG", "image/jpeg": b"\xff\xd8\xff", "image/gif": b"GIF8", "image/webp": b"RIFF"}


def image_bytes(width: int = 8, height: int = 6, kind: str = "PNG", colour=(200, 30, 30), frames: int = 1) -> bytes:
    """An image of `width` x `height` in `kind` (PNG, JPEG, GIF, WEBP); `frames` > 1: an animated GIF."""
    first = Image.new("RGB", (width, height), colour)
    out = io.BytesIO()
    if frames > 1:
        rest = [Image.new("RGB", (width, height), (i * 40 % 256, 0, 0)) for i in range(1, frames)]
        first.save(out, "GIF", save_all=True, append_images=rest)
    else:
        first.save(out, kind)
    return out.getvalue()


def noisy_png(width: int, height: int) -> bytes:
    """A PNG that does not compress (random pixels): bytes grow with its pixels."""
    import os

    image = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def image_parts(body: dict) -> list[tuple[int, str, str, bytes]]:
    """(message index, role, mime, the image's bytes) of every image part of a chat request."""
    found = []
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        for part in content if isinstance(content, list) else ():
            if part.get("type") == "image_url":
                match = DATA_URL.fullmatch(part["image_url"]["url"])
                mime, data = (match.group(1), base64.b64decode(match.group(2))) if match else ("?", b"")
                found.append((i, message["role"], mime, data))
    return found


def part_problems(body: dict) -> list[str]:
    """What a server taking images would refuse in a request's messages: a part of an unknown
    type or shape, an image outside a user message, a URL that is no data: URL of the image its
    bytes are, or a key of ours left on a message."""
    problems = []
    for i, message in enumerate(body.get("messages") or []):
        ours = [key for key in message if key.startswith("nanohermes")]
        if ours:
            problems.append(f"message {i} carries {ours}")
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                continue
            if kind != "image_url" or set(part) - {"type", "image_url", "cache_control"}:
                problems.append(f"message {i}: a part of type {kind!r} or shape {sorted(part)}")
                continue
            if message.get("role") != "user":
                problems.append(f"message {i}: an image in a {message.get('role')} message")
            match = DATA_URL.fullmatch(str((part.get("image_url") or {}).get("url")))
            if match is None:
                problems.append(f"message {i}: an image URL that is no data: URL")
            elif not base64.b64decode(match.group(2)).startswith(MAGIC[match.group(1)]):
                problems.append(f"message {i}: bytes that are no {match.group(1)}")
    return problems
