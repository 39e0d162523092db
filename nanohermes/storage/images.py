"""The images a session sent the model, each stored once under its SHA-256 in the session's
checkpoints directory (`checkpoints/NAME/images/`), so they go with the session (storage/catalog.py
removes it, storage/fork.py links it). The conversation and the session file name an image by its
digest only (context/images.py); the bytes are read back when a request is sent, so a resumed
session sends the same image and a session file never holds base64: an image attached once and
kept through ten compactions is one file and ten 64-character names.
"""

from __future__ import annotations

import base64
import re
import threading
from collections import OrderedDict
from pathlib import Path

from nanohermes.fileio import read_bounded
from nanohermes.storage.blobs import put_blob

_REF = re.compile(r"[0-9a-f]{64}")  # a digest, nothing else: a session file's name never reaches a path
# Above any image this store keeps (tools/images.py sends at most MAX_IMAGE_BYTES): a file swapped
# for a bigger one is not read whole.
MAX_STORED_BYTES = 16 * 2**20
# Data URLs kept in memory: every request resends the images of the working set, at most
# MAX_IMAGES_PER_REQUEST (context/budget.py) of them; a few more for a compaction's summary request.
CACHED_URLS = 8


class ImageStore:
    def __init__(self, root: Path):
        self.root = root
        self._urls: OrderedDict[str, str] = OrderedDict()
        self._writing = threading.Lock()  # reads run side by side: one image read twice at once is written once

    def put(self, data: bytes) -> str:
        """Keep `data` (once); its reference."""
        with self._writing:
            return put_blob(self.root, data)

    def data_url(self, ref: str, mime: str) -> str | None:
        """The image as a `data:` URL, or None when it is not stored (removed by hand, a session
        copied without its directory)."""
        key = f"{mime}:{ref}"
        if key in self._urls:
            self._urls.move_to_end(key)
            return self._urls[key]
        if not _REF.fullmatch(ref):
            return None
        try:
            data = read_bounded(self.root / ref, MAX_STORED_BYTES)
        except OSError:
            return None
        url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        self._urls[key] = url
        while len(self._urls) > CACHED_URLS:
            self._urls.popitem(last=False)
        return url
