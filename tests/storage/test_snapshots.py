"""Workspace snapshots and restoring them: real files, real scans (rg or the walk)."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nanohermes.storage import restore
from nanohermes.storage.fork import fork_session
from nanohermes.storage.scan import Limits
from nanohermes.storage.session import Session
from nanohermes.storage.snapshots import AFTER, BEFORE, Snapshots

OLD_NS = 1_000_000_000_000_000_000  # 2001: far outside the racy window, so the stat is trusted


def tree(root) -> dict[str, bytes]:
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = Path(path).read_bytes()
    return found


def put(root, files: dict[str, bytes], old: bool = False) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if old:
            os.utime(path, ns=(OLD_NS, OLD_NS))


def restore_to(snaps: Snapshots, prompt_serial: int, overwrite: bool = True) -> restore.Outcome:
    start = snaps.start_of(prompt_serial)
    left, _ = snaps.latest()
    todo = restore.plan(start.entries, start.complete, snaps.look().entries, left, start.outside)
    return restore.apply(todo, start.entries, snaps.workspace, snaps.blobs, overwrite)


def test_an_unchanged_file_is_not_read_again_and_a_same_size_edit_is_still_seen(tmp_path, workspace):
    put(workspace, {f"src/m{i}.py": b"x" * 10 for i in range(30)}, old=True)
    snaps = Snapshots(tmp_path / "cp", workspace, limits=Limits(racy_ns=0))  # no clock tick to wait out
    snaps.checkpoint(BEFORE)
    assert snaps.look().hashed == 0  # stat says nothing changed
    path = workspace / "src/m3.py"
    path.write_bytes(b"y" * 10)
    os.utime(path, ns=(OLD_NS, OLD_NS))  # same size, same mtime: the ctime still moved
    change = snaps.checkpoint(AFTER, "sed")
    assert change.changed == ["src/m3.py"] and change.summary() == "changed 1 file"


def test_each_snapshot_stores_only_what_changed_and_a_torn_line_is_dropped(tmp_path, workspace):
    put(workspace, {f"f{i}.txt": b"%d" % i for i in range(200)}, old=True)
    snaps = Snapshots(tmp_path / "cp", workspace, limits=Limits(racy_ns=0))
    snaps.checkpoint(BEFORE)
    first = snaps.index.stat().st_size
    for step in range(20):
        put(workspace, {"f7.txt": b"step %d" % step})
        snaps.checkpoint(AFTER, "gen")
    per_step = (snaps.index.stat().st_size - first) / 20
    assert per_step < 400, per_step  # a delta of one file, not the 200-file manifest
    with open(snaps.index, "ab") as f:
        f.write(b'{"seq": 99, "prom')  # a crash mid-line
    again = Snapshots(tmp_path / "cp", workspace)
    assert len(again.records()) == 21 and again.latest()[0]["f7.txt"] == snaps.latest()[0]["f7.txt"]
    put(workspace, {"f8.txt": b"new"})
    again.checkpoint(AFTER, "x")
    assert len(Snapshots(tmp_path / "cp", workspace).records()) == 22  # appended after the cut, readable


def test_every_cap_leaves_the_file_uncovered_with_its_reason(tmp_path, workspace):
    put(workspace, {"small.txt": b"s", "big.bin": b"b" * 100, "other.bin": b"o" * 60})
    change = Snapshots(tmp_path / "cp", workspace, limits=Limits(file_bytes=80, checkpoint_bytes=50)).checkpoint(BEFORE)
    assert "per-file cap" in change.uncovered["big.bin"] and "per-checkpoint cap" in change.uncovered["other.bin"]
    assert "small.txt" not in change.uncovered
    timed = Snapshots(tmp_path / "cp2", workspace, limits=Limits(seconds=-1))
    assert "the scan stopped (over -1 s); " in timed.checkpoint(BEFORE).note
    assert "checkpoints are off for the rest of this session" in timed.off  # not waited out at every command
    many = Snapshots(tmp_path / "cp3", workspace, limits=Limits(files=2)).checkpoint(BEFORE)
    assert "the listing stopped (more than 2 files" in many.note


def test_a_change_made_between_turns_is_asked_about_even_after_a_later_snapshot_saw_it(tmp_path, workspace):
    serial = [1]
    put(workspace, {"agent.py": b"v1", "mine.txt": b"mine v1"})
    snaps = Snapshots(tmp_path / "cp", workspace, prompt=lambda: serial[0])
    snaps.checkpoint(BEFORE)
    put(workspace, {"agent.py": b"v2"})
    snaps.checkpoint(AFTER, "sed")
    put(workspace, {"mine.txt": b"mine v2"})  # the user, between turns
    serial[0] = 2
    snaps.checkpoint(BEFORE)  # the next turn's first command: its snapshot sees the user's edit
    put(workspace, {"agent.py": b"v3"})
    snaps.checkpoint(AFTER, "sed")
    outcome = restore_to(snaps, 1, overwrite=False)
    assert outcome.written == ["agent.py"] and outcome.kept == ["mine.txt"]
    assert (workspace / "mine.txt").read_bytes() == b"mine v2" and (workspace / "agent.py").read_bytes() == b"v1"


def test_restore_never_writes_through_a_directory_swapped_for_a_symlink(tmp_path, workspace):
    outside = tmp_path / "outside"
    outside.mkdir()
    put(workspace, {"pkg/a.py": b"a"})
    snaps = Snapshots(tmp_path / "cp", workspace, prompt=lambda: 1)
    snaps.checkpoint(BEFORE)
    (workspace / "pkg/a.py").unlink()
    (workspace / "pkg").rmdir()
    (workspace / "pkg").symlink_to(outside)
    snaps.checkpoint(AFTER, "rm")
    outcome = restore_to(snaps, 1)
    assert outcome.failed == {"pkg/a.py": "a symbolic link on its path"} and not list(outside.iterdir())


names = st.sampled_from(["a", "b", "d/c", "d/e/f", "g/h"])
trees = st.dictionaries(names, st.binary(max_size=20), max_size=5)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=trees, after=trees)
def test_restoring_a_snapshot_gives_back_the_tree_byte_for_byte(tmp_path_factory, before, after):
    root = tmp_path_factory.mktemp("t")
    workspace = root / "ws"
    workspace.mkdir()
    before = {k: v for k, v in before.items() if not any(o.startswith(k + "/") for o in before)}
    after = {k: v for k, v in after.items() if not any(o.startswith(k + "/") or k.startswith(o + "/") for o in after)}
    put(workspace, before)
    snaps = Snapshots(root / "cp", workspace, prompt=lambda: 1)
    snaps.checkpoint(BEFORE)
    for rel in before:
        (workspace / rel).unlink()
    put(workspace, after)
    snaps.checkpoint(AFTER, "cmd")
    outcome = restore_to(snaps, 1)
    assert not outcome.failed and tree(workspace) == before


def test_a_fork_starts_where_the_source_stands_and_leaves_it_alone(tmp_path, isolated_home):
    with Session(isolated_home, "src", workspace=tmp_path) as session:
        session.record_message({"role": "user", "content": "first"})
        session.record_message({"role": "assistant", "content": "ok"})
    before = (isolated_home / "sessions" / "src.jsonl").read_bytes()
    name = fork_session(isolated_home, "src", "copy")
    assert (isolated_home / "sessions" / "src.jsonl").read_bytes() == before
    with Session(isolated_home, name) as fork:
        assert fork.state.forked_from == "src" and fork.state.workspace == str(tmp_path)
        assert [m["content"] for m in fork.state.messages] == ["first", "ok"]
        assert [p.line for p in fork.state.prompts] == ["first"]
