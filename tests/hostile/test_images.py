"""Images that lie: a name that promises an image over bytes that are none, a small file claiming a
huge canvas, a damaged one, a session file naming an image outside its store, a pasted path into
a credentials directory. Each is refused in a sentence, never sent for what it claims."""

from __future__ import annotations

import struct
import zlib

import pytest

from nanohermes.context.images import IMAGES, on_the_wire
from nanohermes.errors import ImagesRefused
from nanohermes.prompt.mentions import attachment
from nanohermes.storage.images import ImageStore
from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.builtin import BUILTIN_TOOLS
from nanohermes.tools.images import MAX_SOURCE_PIXELS
from tests.support.images import image_bytes

TOOLS = {t.name: t for t in BUILTIN_TOOLS}


@pytest.fixture
def ctx(workspace, isolated_home):
    store = ImageStore(isolated_home / "checkpoints" / "s" / "images")
    return ToolContext(workspace=workspace, home=isolated_home, images=store, vision=lambda: None)


def png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims `width` x `height` and whose pixels are a few bytes: a decompression bomb's shape."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")
    )


def read(ctx, path):
    return dispatch(ctx, TOOLS, "read_file", {"path": path})


def test_a_name_that_promises_an_image_over_other_bytes_is_refused(ctx, workspace):
    (workspace / "shot.png").write_text("not an image at all\n")
    result = read(ctx, "shot.png")
    assert result.content == "error: shot.png is named as an image, but its bytes are no PNG, JPEG, GIF or WebP image"
    with pytest.raises(ImagesRefused, match=r"Your request was not sent: shot\.png is named as an image"):
        attachment("what is in @shot.png?", ctx)


def test_a_small_file_claiming_a_huge_canvas_is_never_decoded(ctx, workspace):
    (workspace / "bomb.png").write_bytes(png_header(12_000, 9_000))
    result = read(ctx, "bomb.png")
    assert not result.ok and f"over the {MAX_SOURCE_PIXELS:,}-pixel limit" in result.content


def test_a_damaged_image_is_refused_before_any_server_sees_it(ctx, workspace):
    (workspace / "cut.png").write_bytes(image_bytes(300, 300)[:-40])
    result = read(ctx, "cut.png")
    assert not result.ok and "looks like PNG by its first bytes but cannot be read as one" in result.content


def test_a_session_naming_an_image_outside_its_store_reads_nothing(isolated_home, tmp_path):
    secret = tmp_path / "secret.png"
    secret.write_bytes(image_bytes())
    store = ImageStore(isolated_home / "checkpoints" / "s" / "images")
    entry = {"ref": "../../../../" + str(secret), "mime": "image/png", "width": 8, "height": 6, "name": "x.png"}
    [wire] = on_the_wire([{"role": "user", "content": "look", IMAGES: [entry]}], store.data_url)
    assert wire["content"][1] == {
        "type": "text",
        "text": "[image x.png is no longer stored (its session's files were removed); read_file reads it again]",
    }
    odd = {**entry, "ref": "0" * 64, "mime": "text/html"}  # a type no image part takes
    [wire] = on_the_wire([{"role": "user", "content": "look", IMAGES: [odd]}], store.data_url)
    assert "no longer stored" in wire["content"][1]["text"]


def test_a_pasted_path_into_a_credentials_directory_is_refused(ctx, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "key.png").write_bytes(image_bytes())
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(ImagesRefused, match="a hidden path"):
        attachment(f"look at '{home}/.ssh/key.png'", ctx)
