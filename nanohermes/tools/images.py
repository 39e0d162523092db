"""An image file as the model is sent it: recognised by its bytes (never its name), checked,
downscaled when too large, stored once (storage/images.py) and described in one line. read_file
sends one this way, and so does a request that names one (prompt/mentions.py).

Pillow decodes and downscales, imported on the first image (start-up never pays for it). An image
within MAX_SIDE and MAX_IMAGE_BYTES is sent as its own bytes; a larger one is scaled to fit
MAX_SIDE (an animated GIF: its first frame) and, while still over MAX_IMAGE_BYTES, made smaller
again. The model is refused an image outright when it takes none (ToolContext.vision says why).
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

from nanohermes.context.images import image_tokens
from nanohermes.errors import ToolError
from nanohermes.fileio import open_regular
from nanohermes.tools import ToolContext

# What a file's first bytes say it is: PNG, JPEG, GIF and WebP, the chat-completions image types.
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")  # a name that promises an image
KINDS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}
# OpenAI scales every image to fit 2048 x 2048 before it looks at it (its published limit): more
# pixels only cost upload and storage. Other servers scale to their own model's size.
MAX_SIDE = 2_048
# One image as sent, in bytes: Anthropic takes 5 MB an image (through OpenRouter or LiteLLM) and
# Groq 4 MB of base64 a request (~3 MB of image); a 2,048-px screenshot is 0.2–1.5 MB as PNG.
MAX_IMAGE_BYTES = 2_000_000
# A file over this is not read: no screenshot or photo a coding task needs is bigger, and decoding
# it would cost memory before any cap applies.
MAX_SOURCE_BYTES = 50 * 2**20
# Pixels decoded at most (a 10,000 x 10,000 image): a small file can claim a huge canvas (a
# "decompression bomb"), and Pillow's own guard only warns below 179 million.
MAX_SOURCE_PIXELS = 100_000_000
SHRINK = 0.75  # each pass over MAX_IMAGE_BYTES scales the side by this
MIN_SIDE = 256  # below this a screenshot's text is unreadable: refused instead
JPEG_QUALITY = 85  # a photo re-encoded: artefacts invisible at the sizes sent


def sniff(head: bytes) -> str | None:
    """The image type `head` (a file's first bytes) begins, or None."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return next((mime for magic, mime in _MAGIC if head.startswith(magic)), None)


def named_as_image(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


@dataclass(frozen=True)
class Prepared:
    """An image as it is sent: its bytes and type, its size, and its size as it was."""

    data: bytes
    mime: str
    width: int
    height: int
    source: tuple[int, int]
    frames: int = 1  # an animated GIF's: its first is sent

    @property
    def scaled(self) -> bool:
        return (self.width, self.height) != self.source


def image_result(ctx: ToolContext, target: Path, shown: str, mime: str) -> tuple[str, dict]:
    """(the line that says what was sent, the conversation's entry for it: context/images.py) for
    the image file `target`; ToolError saying why when it is not sent."""
    refusal = ctx.vision() if ctx.vision is not None else "this session sends the model no images"
    if refusal:
        raise ToolError(f"{shown} is an image ({KINDS[mime]}), which this model is not sent: {refusal}")
    if ctx.images is None:
        raise ToolError(f"{shown} is an image ({KINDS[mime]}), which this session keeps nowhere, so it is not sent")
    with open_regular(target) as f:  # a FIFO swapped in must not block
        data = f.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:
        raise ToolError(f"{shown} is an image over {MAX_SOURCE_BYTES:,} bytes; not sent (downscale it first)")
    image = prepare(data, mime, shown)
    entry = {
        "ref": ctx.images.put(image.data),
        "mime": image.mime,
        "width": image.width,
        "height": image.height,
        "name": shown,
    }
    return describe(shown, mime, image), entry


def describe(shown: str, mime: str, image: Prepared) -> str:
    """`read_file shot.png: PNG image 4000×3000, downscaled to 2048×1536 (312,450 bytes, ~1,105 tokens); attached`."""
    size = f"{image.source[0]}×{image.source[1]}"
    if image.frames > 1:
        size += f", its first of {image.frames} frames"
    if image.scaled:
        size += f", downscaled to {image.width}×{image.height}"
        if image.mime != mime:
            size += f" as {KINDS[image.mime]}"
    tokens = image_tokens(image.width, image.height)
    return f"read_file {shown}: {KINDS[mime]} image {size} ({len(image.data):,} bytes, ~{tokens:,} tokens); attached"


def prepare(data: bytes, mime: str, shown: str) -> Prepared:
    """`data` as it is sent: itself when within the caps, else downscaled. ToolError when it is
    not an image Pillow can read whole, or too large to send at any useful size."""
    from PIL import Image  # here: ~40 ms, and only a session that sends an image pays it

    try:
        with warnings.catch_warnings():  # our own cap below decides; Pillow's warning would reach the terminal
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
        width, height = image.size
        if width * height > MAX_SOURCE_PIXELS:
            raise ToolError(
                f"{shown} is an image of {width}×{height} pixels, over the {MAX_SOURCE_PIXELS:,}-pixel limit; not sent"
            )
        frames = getattr(image, "n_frames", 1)
        image.load()  # decodes it whole: a damaged file fails here, not at the server
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as exc:
        raise ToolError(
            f"{shown} looks like {KINDS[mime]} by its first bytes but cannot be read as one ({exc})"
        ) from None
    if frames == 1 and max(width, height) <= MAX_SIDE and len(data) <= MAX_IMAGE_BYTES:
        return Prepared(data, mime, width, height, (width, height))
    return replace(_smaller(image, mime, shown), frames=frames)


def _smaller(image, mime: str, shown: str) -> Prepared:
    """The image (its first frame) within MAX_SIDE and MAX_IMAGE_BYTES: a photo stays JPEG, the rest
    become PNG (lossless, for screenshots), or JPEG when a PNG without transparency is still too big."""
    source = image.size
    alpha = image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)
    kind = "JPEG" if mime == "image/jpeg" else "PNG"
    side = min(MAX_SIDE, max(source))
    while True:
        data, size = _encoded(image, side, kind, alpha)
        if len(data) <= MAX_IMAGE_BYTES:
            return Prepared(data, "image/jpeg" if kind == "JPEG" else "image/png", *size, source)
        if kind == "PNG" and not alpha:
            kind = "JPEG"  # a photo saved as PNG: the same pixels in a fraction of the bytes
        elif side <= MIN_SIDE:
            raise ToolError(f"{shown} is still over {MAX_IMAGE_BYTES:,} bytes at {side} px; not sent")
        else:
            side = max(MIN_SIDE, int(side * SHRINK))


def _encoded(image, side: int, kind: str, alpha: bool) -> tuple[bytes, tuple[int, int]]:
    from PIL import Image

    frame = image.copy()
    frame.thumbnail((side, side), Image.Resampling.LANCZOS)
    if kind == "JPEG" or frame.mode not in ("RGB", "RGBA", "L", "LA", "P"):
        frame = frame.convert("RGBA" if alpha and kind == "PNG" else "RGB")
    out = io.BytesIO()
    frame.save(out, kind, **({"quality": JPEG_QUALITY} if kind == "JPEG" else {}))
    return out.getvalue(), frame.size
