"""`nanohermes -p` with an image, as a real process against the scripted server: `@shot.png` and a
pasted path reach a server that takes images as image parts; a text-only server is never sent one
and the run fails with the sentence; config.toml's `vision` speaks for a server that says nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.cli import run_cli
from tests.support.images import image_bytes, image_parts
from tests.support.scripted_server import ScriptedServer, text

pytestmark = pytest.mark.subprocess


@pytest.fixture
def vision_server():
    server = ScriptedServer(vision=True)
    yield server
    server.close()


def test_at_shot_png_in_a_one_shot_task_reaches_the_server_as_an_image(vision_server, workspace):
    data = image_bytes(40, 30)
    (workspace / "shot.png").write_bytes(data)
    vision_server.add(text("A red box."))
    r = run_cli(["-p", "what is in @shot.png?", "--base-url", vision_server.url], workspace)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "A red box."
    [request] = vision_server.chat_requests()
    assert image_parts(request) == [(len(request["messages"]) - 1, "user", "image/png", data)]


def test_a_pasted_screenshot_path_outside_the_workspace_is_attached(vision_server, workspace, tmp_path):
    data = image_bytes(12, 12, "JPEG")
    (tmp_path / "Screen Shot 2025-01-02.jpg").write_bytes(data)
    vision_server.add(text("ok"))
    task = f"why is this broken? '{tmp_path}/Screen Shot 2025-01-02.jpg'"
    r = run_cli(["-p", task, "--base-url", vision_server.url], workspace)
    assert r.returncode == 0, r.stderr
    assert [part[2:] for part in image_parts(vision_server.chat_requests()[0])] == [("image/jpeg", data)]


def test_a_text_only_server_is_never_sent_the_image_and_the_run_says_why(workspace):
    (workspace / "shot.png").write_bytes(image_bytes())
    server = ScriptedServer(vision=False)
    try:
        r = run_cli(["-p", "what is in @shot.png?", "--base-url", server.url], workspace)
        assert r.returncode == 1
        assert (
            "Your request was not sent: shot.png is an image (PNG), which this model is not sent: the server says"
            in r.stderr
        )
        assert "no projector" in r.stderr and not server.chat_requests()
    finally:
        server.close()


def test_the_vision_setting_speaks_for_a_server_that_says_nothing(server, workspace, isolated_home):
    (workspace / "shot.png").write_bytes(image_bytes())
    r = run_cli(["-p", "look at @shot.png", "--base-url", server.url], workspace)
    assert r.returncode == 1 and "set vision = true in config.toml" in r.stderr
    (isolated_home / "config.toml").write_text("vision = true\n")
    server.vision = True  # it does take them; it just never said
    server.add(text("seen"))
    r = run_cli(["-p", "look at @shot.png", "--base-url", server.url], workspace)
    assert r.returncode == 0, r.stderr
    assert len(image_parts(server.chat_requests()[-1])) == 1


def test_version_does_not_import_pillow(workspace):
    code = "import sys; sys.argv=['nanohermes','--version']\nfrom nanohermes.launch import main\ntry: main()\nexcept SystemExit: pass\nprint('PIL' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], cwd=workspace, capture_output=True, text=True, timeout=60)
    assert r.stdout.strip().endswith("False"), r.stdout
