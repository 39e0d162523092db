"""read_file on an image: sent as the image (its entry beside a one-line result) when the model takes
images, kept once by digest, downscaled when too large; refused in a sentence when it does not."""

import io

import pytest
from PIL import Image

from nanohermes.context.images import image_tokens
from nanohermes.storage.images import ImageStore
from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.builtin import BUILTIN_TOOLS
from nanohermes.tools.images import MAX_IMAGE_BYTES, MAX_SIDE
from tests.support.images import image_bytes, noisy_png

TOOLS = {t.name: t for t in BUILTIN_TOOLS}
NO_IMAGES = "the server does not say whether test-model takes images; if it does, set vision = true in config.toml"


@pytest.fixture
def store(isolated_home):
    return ImageStore(isolated_home / "checkpoints" / "s" / "images")


@pytest.fixture
def ctx(workspace, isolated_home, store):
    return ToolContext(workspace=workspace, home=isolated_home, images=store, vision=lambda: None)


def read(ctx, path):
    return dispatch(ctx, TOOLS, "read_file", {"path": path})


def stored(store, entry) -> Image.Image:
    return Image.open(io.BytesIO((store.root / entry["ref"]).read_bytes()))


def test_an_image_is_sent_as_itself_with_a_line_that_says_what_it_costs(ctx, store, workspace):
    data = image_bytes(800, 600)
    (workspace / "shot.png").write_bytes(data)
    result = read(ctx, "shot.png")
    assert result.ok and result.content == (
        f"read_file shot.png: PNG image 800×600 ({len(data):,} bytes, ~765 tokens); attached"
    )
    [entry] = result.images
    assert entry == {"ref": entry["ref"], "mime": "image/png", "width": 800, "height": 600, "name": "shot.png"}
    assert (store.root / entry["ref"]).read_bytes() == data  # within the caps: its own bytes
    assert result.facts.path == "shot.png"
    assert read(ctx, "shot.png").images[0]["ref"] == entry["ref"]  # read twice, kept once
    assert len(list(store.root.iterdir())) == 1


def test_an_image_is_known_by_its_bytes_not_its_name(ctx, workspace):
    (workspace / "capture.dat").write_bytes(image_bytes(10, 10, "JPEG"))
    result = read(ctx, "capture.dat")
    assert result.images[0]["mime"] == "image/jpeg" and "JPEG image 10×10" in result.content


def test_a_model_that_takes_no_images_is_refused_in_a_sentence(workspace, isolated_home, store):
    (workspace / "shot.png").write_bytes(image_bytes())
    ctx = ToolContext(workspace=workspace, home=isolated_home, images=store, vision=lambda: NO_IMAGES)
    result = read(ctx, "shot.png")
    assert not result.ok and not result.images
    assert result.content == f"error: shot.png is an image (PNG), which this model is not sent: {NO_IMAGES}"
    assert not store.root.exists()  # nothing kept of an image not sent


def test_an_image_wider_than_the_limit_is_downscaled(ctx, store, workspace):
    (workspace / "wide.png").write_bytes(image_bytes(3_000, 40))
    result = read(ctx, "wide.png")
    [entry] = result.images
    assert (entry["width"], entry["height"]) == (MAX_SIDE, 27)
    assert stored(store, entry).size == (MAX_SIDE, 27)
    assert "PNG image 3000×40, downscaled to 2048×27 (" in result.content
    assert f"~{image_tokens(2048, 27):,} tokens" in result.content


def test_an_image_over_the_byte_cap_is_made_smaller_until_it_fits(ctx, store, workspace):
    data = noisy_png(1_100, 1_000)  # noise: ~3.3 MB as PNG
    assert len(data) > MAX_IMAGE_BYTES
    (workspace / "photo.png").write_bytes(data)
    [entry] = read(ctx, "photo.png").images
    assert (store.root / entry["ref"]).stat().st_size <= MAX_IMAGE_BYTES
    assert entry["mime"] == "image/jpeg" and stored(store, entry).format == "JPEG"  # no transparency: JPEG


def test_an_animated_gif_is_sent_as_its_first_frame(ctx, store, workspace):
    (workspace / "spin.gif").write_bytes(image_bytes(20, 10, frames=3))
    result = read(ctx, "spin.gif")
    [entry] = result.images
    assert entry["mime"] == "image/png" and stored(store, entry).size == (20, 10)
    assert "GIF image 20×10, its first of 3 frames (" in result.content


def test_a_session_without_an_image_store_says_so(workspace, isolated_home):
    (workspace / "shot.png").write_bytes(image_bytes())
    ctx = ToolContext(workspace=workspace, home=isolated_home, vision=lambda: None)
    assert "which this session keeps nowhere, so it is not sent" in read(ctx, "shot.png").content
