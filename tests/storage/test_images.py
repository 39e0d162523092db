"""The images a session sent, kept once by digest beside its checkpoints: read back as data URLs,
copied with a fork (linked), removed with the session."""

import base64

from nanohermes.storage.catalog import remove_session
from nanohermes.storage.fork import fork_session
from nanohermes.storage.images import ImageStore
from nanohermes.storage.session import Session
from tests.support.images import image_bytes


def store_of(home, name: str) -> ImageStore:
    return ImageStore(home / "checkpoints" / name / "images")


def test_an_image_is_kept_once_and_read_back_as_a_data_url(isolated_home):
    store, data = store_of(isolated_home, "s"), image_bytes()
    ref = store.put(data)
    assert store.put(data) == ref and len(list(store.root.iterdir())) == 1
    url = store.data_url(ref, "image/png")
    assert url == "data:image/png;base64," + base64.b64encode(data).decode()
    assert store.data_url("f" * 64, "image/png") is None  # not stored


def test_a_fork_keeps_the_images_and_removing_a_session_removes_its_own(isolated_home):
    with Session(isolated_home, "src") as session:
        session.record_message({"role": "user", "content": "hi"})
    ref = store_of(isolated_home, "src").put(image_bytes())
    fork_session(isolated_home, "src", "copy")
    assert store_of(isolated_home, "copy").data_url(ref, "image/png") is not None
    remove_session(isolated_home, "src")
    assert not (isolated_home / "checkpoints" / "src").exists()
    assert store_of(isolated_home, "copy").data_url(ref, "image/png") is not None  # a link: the fork's own
