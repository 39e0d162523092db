"""Issue 45, item 1: Claude Code's settings files are read for hooks now, so a hostile one (a
repository's .claude/settings.json) must cost one warning line naming it: never a hang (a FIFO),
a crash (a nesting bomb, bytes that are no UTF-8) or a long parse (a huge file)."""

from __future__ import annotations

import os

from nanohermes.hooks.claude_settings import SETTINGS_BYTES, read_claude_hooks
from nanohermes.hooks.settings import FROM_CLAUDE_PROJECT


def _read(path, workspace):
    return read_claude_hooks(path, FROM_CLAUDE_PROJECT, workspace)


def test_a_fifo_in_place_of_the_settings_file_is_a_warning_not_a_hang(tmp_path):
    fifo = tmp_path / "settings.json"
    os.mkfifo(fifo)
    read = _read(fifo, tmp_path)
    assert read.specs == () and str(fifo) in read.warning and "not read" in read.warning


def test_a_nesting_bomb_is_a_warning(tmp_path):
    bomb = tmp_path / "settings.json"
    bomb.write_text('{"hooks": ' + "[" * 200_000 + "]" * 200_000 + "}")
    read = _read(bomb, tmp_path)
    assert read.specs == () and "nested too deeply" in read.warning and str(bomb) in read.warning


def test_a_file_over_the_cap_is_not_parsed(tmp_path):
    big = tmp_path / "settings.json"
    big.write_text('{"hooks": {}, "pad": "' + "x" * SETTINGS_BYTES + '"}')
    read = _read(big, tmp_path)
    assert read.specs == () and f"over {SETTINGS_BYTES:,} bytes" in read.warning


def test_bytes_that_are_no_utf8_and_json_that_is_no_object_are_warnings(tmp_path):
    raw = tmp_path / "raw.json"
    raw.write_bytes(b'{"hooks": "\xff\xfe"}')
    assert "is not valid JSON" in _read(raw, tmp_path).warning
    listed = tmp_path / "listed.json"
    listed.write_text("[1, 2]")
    assert "is not a JSON object" in _read(listed, tmp_path).warning


def test_thousands_of_broken_entries_stay_one_line(tmp_path):
    many = tmp_path / "settings.json"
    many.write_text('{"hooks": {"Stop": [' + ",".join(["42"] * 5_000) + "]}}")
    read = _read(many, tmp_path)
    assert read.specs == () and "\n" not in read.warning and read.warning.endswith("; and 4997 more.")
