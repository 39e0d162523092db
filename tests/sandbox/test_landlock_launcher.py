"""The Landlock launcher never runs a command unconfined."""

from __future__ import annotations

import subprocess
import sys

from nanohermes.sandbox.landlock import LAUNCH_FAILED
from nanohermes.sandbox.launch import LAUNCHER
from tests.sandbox.conftest import NEEDS_LANDLOCK


def _launch(*args: str, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-S", "-I", LAUNCHER, *args], capture_output=True, text=True, cwd=tmp_path)


def test_a_bad_argument_fails_before_the_command_runs(tmp_path):
    done = _launch("--bogus", "--", "touch", "ran", tmp_path=tmp_path)
    assert done.returncode == LAUNCH_FAILED
    assert "the command was not run" in done.stderr
    assert not (tmp_path / "ran").exists()


@NEEDS_LANDLOCK
def test_a_missing_program_exits_127_like_the_shell(tmp_path):
    done = _launch("--write", str(tmp_path), "--", "no-such-program-here", tmp_path=tmp_path)
    assert done.returncode == 127
    assert "no-such-program-here" in done.stderr


@NEEDS_LANDLOCK
def test_rules_bind_the_command_and_all_it_starts(tmp_path):
    writable, outside = tmp_path / "w", tmp_path / "o"
    writable.mkdir()
    outside.mkdir()
    done = _launch(
        "--write",
        str(writable),
        "--",
        "bash",
        "-c",
        f"bash -c 'touch {outside}/x'; touch {writable}/y",
        tmp_path=tmp_path,
    )
    assert done.returncode == 0
    assert (writable / "y").exists() and not (outside / "x").exists()
