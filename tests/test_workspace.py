"""The workspace's files (workspace.py): the gitignore-aware walk and the listing the
overview and the steering notes are built from, on real trees in temp dirs."""

from __future__ import annotations

import os

from nanohermes.workspace import list_workspace, walk


def write(path, text="x\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def walked(root, base=None, **kw):
    return [rel for rel, _ in walk(root, base or root, **kw)]


def test_the_state_directory_is_left_out_by_its_literal_name_even_with_glob_characters(tmp_path):
    ws = tmp_path / "ws"
    state = ws / "st[a]te"  # as a glob, "st[a]te" names "state", not itself
    (state / "sessions").mkdir(parents=True)
    (state / "memory.json").write_text("{}")
    (state / "sessions" / "s.jsonl").write_text("{}\n")
    (ws / "state").mkdir()
    (ws / "state" / "keep.txt").write_text("kept")
    (ws / "main.py").write_text("print(1)\n")
    assert list_workspace(ws, exclude=state).files == ("main.py", "state/keep.txt")


def test_walk_honours_nested_gitignore_with_negation(workspace):
    write(workspace / ".gitignore", "*.log\nbuild/\n")
    write(workspace / "a.py")
    write(workspace / "debug.log")
    write(workspace / "build" / "out.py")
    write(workspace / "sub" / ".gitignore", "!keep.log\nlocal.py\n")
    write(workspace / "sub" / "keep.log")
    write(workspace / "sub" / "drop.log")
    write(workspace / "sub" / "local.py")
    write(workspace / "sub" / "b.py")
    assert walked(workspace) == [".gitignore", "a.py", "sub/.gitignore", "sub/b.py", "sub/keep.log"]


def test_walk_always_skips_git_and_keeps_hidden_files(workspace):
    write(workspace / ".git" / "config")
    write(workspace / ".github" / "workflows" / "ci.yml")
    write(workspace / "x.py")
    assert walked(workspace) == [".github/workflows/ci.yml", "x.py"]


def test_walk_does_not_follow_symlinks(workspace, tmp_path):
    write(tmp_path / "outside" / "secret.py")
    (workspace / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    write(workspace / "in.py")
    assert walked(workspace) == ["in.py"]


def test_walk_of_subdirectory_applies_parent_gitignore(workspace):
    write(workspace / ".gitignore", "*.tmp\n")
    write(workspace / "sub" / "a.tmp")
    write(workspace / "sub" / "a.py")
    assert walked(workspace / "sub", workspace) == ["sub/a.py"]


def test_walk_can_list_directories(workspace):
    write(workspace / "d" / "e" / "f.txt")
    assert walked(workspace, include_dirs=True) == ["d", "d/e", "d/e/f.txt"]


def test_walk_skips_unreadable_directories(workspace):
    write(workspace / "locked" / "x.py")
    write(workspace / "open.py")
    os.chmod(workspace / "locked", 0)
    try:
        names = walked(workspace)
    finally:
        os.chmod(workspace / "locked", 0o755)
    assert "open.py" in names
