"""Checkpoints kept by write_file and edit_file, and undoing them, on real files (no git)."""

import os

import pytest

from nanohermes.storage.checkpoints import CHANGED_SINCE, NOTHING, UNDONE, Checkpoints
from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.edit import edit_file
from nanohermes.tools.files import write_file

TOOLS = {t.name: t for t in (write_file, edit_file)}


@pytest.fixture
def store(isolated_home):
    return Checkpoints(isolated_home / "checkpoints" / "s1")


@pytest.fixture
def ctx(workspace, isolated_home, store):
    return ToolContext(workspace=workspace, home=isolated_home, checkpoints=store, call_id="c1")


def test_undo_restores_an_edit_then_removes_a_created_file(ctx, store, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    dispatch(ctx, TOOLS, "edit_file", {"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"})
    dispatch(ctx, TOOLS, "write_file", {"path": "new.txt", "content": "hello\n"})
    assert [c.tool for c in store.changes()] == ["edit_file", "write_file"]
    assert store.undo_last().status == UNDONE and not (workspace / "new.txt").exists()
    assert store.undo_last().status == UNDONE and (workspace / "a.py").read_text() == "x = 1\n"
    assert store.undo_last().status == NOTHING


def test_undo_refuses_when_the_file_changed_since(ctx, store, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    dispatch(ctx, TOOLS, "edit_file", {"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"})
    (workspace / "a.py").write_text("x = 3  # the user's own change\n")
    outcome = store.undo_last()
    assert outcome.status == CHANGED_SINCE and outcome.checkpoint.shown == "a.py"
    assert (workspace / "a.py").read_text() == "x = 3  # the user's own change\n"


def test_checkpoints_survive_a_restart_and_are_private(ctx, store, workspace, isolated_home):
    dispatch(ctx, TOOLS, "write_file", {"path": "a.txt", "content": "one\n"})
    dispatch(ctx, TOOLS, "write_file", {"path": "a.txt", "content": "two\n"})
    again = Checkpoints(store.root)
    assert [c.undone for c in again.changes()] == [False, False]
    assert again.undo_last().status == UNDONE and (workspace / "a.txt").read_text() == "one\n"
    assert [c.undone for c in Checkpoints(store.root).changes()] == [False, True]
    assert os.stat(store.root / "index.jsonl").st_mode & 0o077 == 0
    assert all(os.stat(p).st_mode & 0o077 == 0 for p in (store.root / "blobs").iterdir())


def test_a_write_that_changes_nothing_keeps_no_checkpoint(ctx, store, workspace):
    (workspace / "a.txt").write_text("same\n")
    dispatch(ctx, TOOLS, "write_file", {"path": "a.txt", "content": "same\n"})
    assert store.changes() == []


def test_a_checkpoint_that_cannot_be_kept_stops_the_write(ctx, store, workspace):
    store.root.parent.mkdir(parents=True)
    store.root.write_text("not a directory")  # the store cannot create its folder
    result = dispatch(ctx, TOOLS, "write_file", {"path": "a.txt", "content": "x"})
    assert not result.ok and "undo checkpoint" in result.content and not (workspace / "a.txt").exists()
