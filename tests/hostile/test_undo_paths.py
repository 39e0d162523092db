"""/undo after a directory on an edited file's path was swapped for a symlink: the path kept
was resolved when the change was made, and /undo walks it again from / without following any
link, so nothing outside the workspace is written or deleted; it says why in the REPL."""

from __future__ import annotations

import pytest

from nanohermes.slash.changes import undo_outcome
from nanohermes.slash.outcome import words
from nanohermes.storage.checkpoints import Checkpoints
from tests.support.cli import run_cli
from tests.support.scripted_server import call, text
from tests.support.terminal import Terminal

pytestmark = [pytest.mark.pty, pytest.mark.subprocess]


def swapped_for_a_link(workspace, outside):
    """ws/sub moved away and replaced by a link to `outside`, which holds what the edits left."""
    (workspace / "sub").rename(workspace.parent / "moved")
    outside.mkdir()
    (outside / "a.txt").write_text("after\n")
    (outside / "new.txt").write_text("created\n")
    (workspace / "sub").symlink_to(outside)


def test_undo_through_a_directory_swapped_for_a_symlink_is_refused_in_the_repl(server, workspace, tmp_path):
    (workspace / "sub").mkdir()
    (workspace / "sub" / "a.txt").write_text("before\n")
    server.add(
        call("write_file", {"path": "sub/a.txt", "content": "after\n"}),
        call("write_file", {"path": "sub/new.txt", "content": "created\n"}),
        text("Done."),
    )
    term = Terminal(server, workspace, "--yes")
    term.send("edit them\r")
    term.expect("session ")
    term.ready()
    outside = tmp_path / "outside"
    swapped_for_a_link(workspace, outside)
    term.send("/undo\r")
    term.expect("undo")
    term.settle()
    screen = "\n".join(term.scrollback() + term.display())
    assert "not undone: sub/new.txt or a directory on its path is a symbolic link now" in screen
    assert (outside / "new.txt").read_text() == "created\n"  # not deleted
    term.exit()


def test_undo_restores_nothing_outside_through_a_swapped_directory(server, workspace, tmp_path, isolated_home):
    (workspace / "sub").mkdir()
    (workspace / "sub" / "a.txt").write_text("before\n")
    server.add(call("write_file", {"path": "sub/a.txt", "content": "after\n"}), text("Done."))
    r = run_cli(["-p", "edit", "--yes", "--session", "s", "--base-url", server.url], workspace, timeout=60)
    assert r.returncode == 0, r.stderr
    outside = tmp_path / "outside"
    swapped_for_a_link(workspace, outside)
    undone = undo_outcome(Checkpoints(isolated_home / "checkpoints" / "s"))
    assert undone.note is None and "symbolic link now" in words(undone)
    assert (outside / "a.txt").read_text() == "after\n"  # not restored out there
    assert (workspace.parent / "moved" / "a.txt").read_text() == "after\n"


def test_undo_still_restores_through_real_directories(server, workspace, isolated_home):
    (workspace / "sub" / "deep").mkdir(parents=True)
    (workspace / "sub" / "deep" / "a.txt").write_text("before\n")
    (workspace / "sub" / "deep" / "a.txt").chmod(0o640)
    server.add(call("write_file", {"path": "sub/deep/a.txt", "content": "after\n"}), text("Done."))
    r = run_cli(["-p", "edit", "--yes", "--session", "s", "--base-url", server.url], workspace, timeout=60)
    assert r.returncode == 0, r.stderr
    undone = undo_outcome(Checkpoints(isolated_home / "checkpoints" / "s"))
    assert undone.note is not None and (workspace / "sub" / "deep" / "a.txt").read_text() == "before\n"
    assert (workspace / "sub" / "deep" / "a.txt").stat().st_mode & 0o777 == 0o640
    assert not [p.name for p in (workspace / "sub" / "deep").iterdir() if p.name != "a.txt"]  # no temp file left
