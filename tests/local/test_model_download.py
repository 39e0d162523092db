"""The default model's download (local/download.py) and checksum (local/models.py), against a real
HTTP server on 127.0.0.1 that serves a small stand-in "model": resumed with a Range request,
started over when the server ignores the range, retried after a dropped connection, a mismatch
deleted and said. No test touches the internet or the real cache."""

from __future__ import annotations

import hashlib
import io
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from nanohermes.errors import LocalModelError
from nanohermes.local.download import Progress, download
from nanohermes.local.models import ModelSpec, cache_dir, cached_model

BLOB = bytes(range(256)) * 4096  # 1 MiB that is not all one byte
SHA = hashlib.sha256(BLOB).hexdigest()


class FileServer:
    """Serves `body` at /model.gguf, honouring Range unless told not to; `cut_first` closes the
    first response after that many bytes; every request's Range header is logged."""

    def __init__(self, body: bytes = BLOB, honour_range: bool = True, cut_first: int | None = None, status=200):
        self.body, self.honour_range, self.cut_first, self.status = body, honour_range, cut_first, status
        self.ranges: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.ranges.append(self.headers.get("Range"))
                if server.status != 200:
                    self.send_error(server.status)
                    return
                start = 0
                if server.honour_range and self.headers.get("Range"):
                    start = int(self.headers["Range"].removeprefix("bytes=").split("-")[0])
                    if start >= len(server.body):
                        self.send_error(416)
                        return
                piece = server.body[start:]
                self.send_response(206 if start else 200)
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(server.body) - 1}/{len(server.body)}")
                self.send_header("Content-Length", str(len(piece)))
                self.end_headers()
                if server.cut_first is not None and len(server.ranges) == 1:
                    piece = piece[: server.cut_first]  # the connection drops here
                self.wfile.write(piece)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/model.gguf"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def served():
    servers = []

    def make(**kw) -> FileServer:
        servers.append(FileServer(**kw))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def spec_for(server: FileServer, sha: str = SHA) -> ModelSpec:
    return ModelSpec("tiny", "tiny.gguf", server.url, sha, len(BLOB), trained_context=4096)


def fetch_into(lines: io.StringIO):
    return lambda spec, target: download(spec.url, target, spec.size, Progress(stream=lines))


def test_the_model_is_downloaded_once_with_progress_and_checked_once(served, tmp_path):
    server, lines, said = served(), io.StringIO(), []
    path = cached_model(spec_for(server), tmp_path / "models", fetch_into(lines), said.append)
    assert path.read_bytes() == BLOB and said == []
    assert lines.getvalue().splitlines()[-1].startswith("  [##############################] 100% 1/1 MB ")
    assert not (tmp_path / "models" / "tiny.gguf.part").exists()
    again = cached_model(spec_for(server), tmp_path / "models", fetch_into(lines), said.append)
    assert again == path and server.ranges == [None]  # no second download


def test_a_partial_download_is_resumed_where_it_stopped(served, tmp_path):
    server = served()
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "tiny.gguf.part").write_bytes(BLOB[:300_000])
    path = cached_model(spec_for(server), folder, fetch_into(io.StringIO()), print)
    assert server.ranges == ["bytes=300000-"] and path.read_bytes() == BLOB


def test_a_whole_part_left_by_a_stopped_run_is_finished_without_downloading(served, tmp_path):
    server = served()
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "tiny.gguf.part").write_bytes(BLOB)  # stopped between the last byte and the rename
    path = cached_model(spec_for(server), folder, fetch_into(io.StringIO()), print)
    assert server.ranges == [f"bytes={len(BLOB)}-"] and path.read_bytes() == BLOB


def test_a_server_that_ignores_the_range_gets_a_clean_restart(served, tmp_path):
    server = served(honour_range=False)
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "tiny.gguf.part").write_bytes(b"x" * 1000)  # not even a prefix of the file: overwritten
    path = cached_model(spec_for(server), folder, fetch_into(io.StringIO()), print)
    assert server.ranges == ["bytes=1000-"] and path.read_bytes() == BLOB


def test_a_dropped_connection_is_resumed(served, tmp_path):
    server = served(cut_first=400_000)
    path = cached_model(spec_for(server), tmp_path / "models", fetch_into(io.StringIO()), print)
    assert server.ranges == [None, "bytes=400000-"] and path.read_bytes() == BLOB


def test_a_download_that_does_not_match_its_checksum_is_deleted_and_said(served, tmp_path):
    server = served()
    folder = tmp_path / "models"
    with pytest.raises(LocalModelError, match=r"did not match its sha256 \(0{64}\): it was deleted"):
        cached_model(spec_for(server, sha="0" * 64), folder, fetch_into(io.StringIO()), print)
    assert [p.name for p in folder.iterdir() if p.name.startswith("tiny.gguf") and p.suffix != ".lock"] == []


def test_a_cached_file_that_does_not_match_is_replaced_and_said(served, tmp_path):
    server, said = served(), []
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "tiny.gguf").write_bytes(BLOB[:-1] + b"!")
    path = cached_model(spec_for(server), folder, fetch_into(io.StringIO()), said.append)
    assert path.read_bytes() == BLOB
    assert said == [f"{folder / 'tiny.gguf'} did not match its checksum: deleted, downloading it again"]


def test_a_missing_file_fails_at_once_naming_the_url(served, tmp_path):
    server = served(status=404)
    with pytest.raises(LocalModelError, match=r"Could not download http://127\.0\.0\.1:\d+/model\.gguf: HTTP 404"):
        cached_model(spec_for(server), tmp_path / "models", fetch_into(io.StringIO()), print)
    assert server.ranges == [None]


def test_the_cache_directory_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "nanohermes" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "nanohermes" / "models"
