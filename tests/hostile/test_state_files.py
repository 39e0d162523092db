"""The agent's own state swapped for something that is not a regular file: a FIFO (a reader
would wait for a writer for ever), /dev/zero (never ends), a missing blob. Every reader of the
state refuses what is not a regular file and bounds what it reads; the CLI says what it met,
never hangs and never prints the crash paragraph."""

from __future__ import annotations

import os

import pytest

from nanohermes.slash.changes import diff_outcome, undo_outcome
from nanohermes.slash.outcome import words
from nanohermes.storage.checkpoints import Checkpoints
from tests.support.cli import run_cli
from tests.support.raw_servers import closed_port_url
from tests.support.scripted_server import call, text

pytestmark = pytest.mark.subprocess

NEVER_HANGS_S = 30  # a run that waited on a FIFO never returns; a clean one takes a few seconds under load


def cli(workspace, *args):
    endpoint = ["--base-url", closed_port_url()] if args[0] == "-p" else []
    r = run_cli([*args, *endpoint], workspace, timeout=NEVER_HANGS_S)
    assert "Traceback" not in r.stderr and "a bug in NanoHermes" not in r.stderr, r.stderr
    return r


def test_a_fifo_for_config_toml_is_a_clear_error(workspace, isolated_home):
    os.mkfifo(isolated_home / "config.toml")
    r = cli(workspace, "-p", "hi")
    assert r.returncode == 1 and "config.toml" in r.stderr and "FIFO" in r.stderr, r.stderr


def test_a_fifo_for_memory_json_is_not_read(workspace, isolated_home):
    os.mkfifo(isolated_home / "memory.json")
    r = cli(workspace, "-p", "hi")
    assert "memory.json" in r.stderr and "FIFO" in r.stderr, r.stderr


def test_a_fifo_among_the_sessions_does_not_hang_the_listing_or_continue(server, workspace, isolated_home):
    server.add(text("first"), text("second"))
    first = run_cli(["-p", "hi", "--session", "real", "--base-url", server.url], workspace, timeout=60)
    assert first.returncode == 0, first.stderr
    os.mkfifo(isolated_home / "sessions" / "pipe.jsonl")
    listing = cli(workspace, "sessions")
    assert listing.returncode == 0 and "real" in listing.stdout, listing.stderr
    resumed = run_cli(["-p", "again", "-c", "--base-url", server.url], workspace, timeout=NEVER_HANGS_S)
    assert resumed.returncode == 0 and resumed.stdout == "second\n", resumed.stderr
    assert [m["content"] for m in server.chat_requests()[-1]["messages"][1:3]] == ["hi", "first"]


def test_a_fifo_for_the_session_named_is_a_clear_error(workspace, isolated_home):
    (isolated_home / "sessions").mkdir()
    os.mkfifo(isolated_home / "sessions" / "pipe.jsonl")
    r = cli(workspace, "-p", "hi", "--session", "pipe")
    assert r.returncode == 1 and "pipe.jsonl" in r.stderr and "FIFO" in r.stderr, r.stderr


def edited_in_a_session(server, workspace, isolated_home, name="edits") -> Checkpoints:
    """A real `-p` run whose write_file changed notes.md: its checkpoints, as /undo finds them."""
    (workspace / "notes.md").write_text("before\n")
    server.add(call("write_file", {"path": "notes.md", "content": "after\n"}), text("Done."))
    r = run_cli(["-p", "note", "--yes", "--session", name, "--base-url", server.url], workspace, timeout=60)
    assert r.returncode == 0, r.stderr
    return Checkpoints(isolated_home / "checkpoints" / name)


@pytest.mark.parametrize("swap", ["fifo", "dev-zero"])
def test_undo_and_diff_do_not_read_a_fifo_or_dev_zero_swapped_in_for_an_edited_file(
    server, workspace, isolated_home, swap
):
    checkpoints = edited_in_a_session(server, workspace, isolated_home)
    (workspace / "notes.md").unlink()
    if swap == "fifo":
        os.mkfifo(workspace / "notes.md")
    else:
        (workspace / "notes.md").symlink_to("/dev/zero")
    diff = words(diff_outcome(checkpoints))
    assert "notes.md" in diff and f"not read: it is {'a FIFO' if swap == 'fifo' else 'a character device'}" in diff
    undone = undo_outcome(checkpoints)
    refused = "changed since write_file wrote it" if swap == "fifo" else "is a symbolic link now"  # /dev/zero: a link
    assert (
        undone.note is None and refused in words(undone) and (workspace / "notes.md").is_symlink() == (swap != "fifo")
    )


def test_a_missing_checkpoint_blob_is_a_clear_refusal_not_a_crash(server, workspace, isolated_home):
    checkpoints = edited_in_a_session(server, workspace, isolated_home)
    change = checkpoints.changes()[-1]
    (isolated_home / "checkpoints" / "edits" / "blobs" / change.before).unlink()
    assert "the content before is missing from the checkpoints" in words(diff_outcome(checkpoints))
    undone = undo_outcome(checkpoints)
    assert undone.note is None and "the content kept before it is missing from" in words(undone)
    assert (workspace / "notes.md").read_text() == "after\n"  # nothing was half done


def test_a_fifo_for_the_checkpoint_index_is_said_not_waited_on(server, workspace, isolated_home):
    edited_in_a_session(server, workspace, isolated_home)
    index = isolated_home / "checkpoints" / "edits" / "index.jsonl"
    index.unlink()
    os.mkfifo(index)
    checkpoints = Checkpoints(index.parent)
    assert "cannot read the checkpoints" in words(diff_outcome(checkpoints)) and "FIFO" in words(
        diff_outcome(checkpoints)
    )
    undone = undo_outcome(checkpoints)
    assert undone.note is None and "FIFO" in words(undone)


def test_a_fifo_for_the_workspace_gitignore_does_not_hang_a_run(server, workspace):
    (workspace / "app.py").write_text("print(1)\n")
    os.mkfifo(workspace / ".gitignore")
    server.add(text("fine"))
    r = run_cli(["-p", "hi", "--base-url", server.url], workspace, timeout=NEVER_HANGS_S)
    assert r.returncode == 0 and r.stdout == "fine\n", r.stderr
    assert "app.py" in server.chat_requests()[0]["messages"][0]["content"]  # the overview was still built
