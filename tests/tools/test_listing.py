"""The workspace listing the overview and the steering notes are built from (tools/listing.py)."""

from __future__ import annotations

from nanohermes.tools.listing import list_workspace


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
