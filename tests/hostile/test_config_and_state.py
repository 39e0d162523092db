"""Broken configuration and state: every one is a clear error naming what to fix, never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nanohermes.cli import app
from tests.support.cli import BIN
from tests.support.raw_servers import closed_port_url

pytestmark = pytest.mark.subprocess


def one_shot(workspace, *args):
    result = CliRunner().invoke(app, ["-p", "hi", "--base-url", closed_port_url(), "-C", str(workspace), *args])
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result


def test_a_config_file_that_is_not_utf8_is_a_clear_error(workspace, isolated_home):
    (isolated_home / "config.toml").write_bytes(b'model = "caf\xe9"\n')
    r = one_shot(workspace)
    assert r.exit_code == 1 and "config.toml is not UTF-8 text" in r.stderr and "b'\\xe9'" in r.stderr


@pytest.mark.parametrize(
    "line, says",
    [
        ("command_timeout = inf", "command_timeout = inf (from"),
        ("request_timeout = nan", "must be a finite number"),
        ("temperature = nan", "temperature = nan"),
        ("max_tokens = 1e300", "max_tokens = 1e+300"),
        ("max_tokens = 1.5", "must be an integer"),
        ("max_steps = true", "must be an integer"),
    ],
    ids=["inf-timeout", "nan-request-timeout", "nan-temperature", "huge-float-int", "fractional-int", "bool-int"],
)
def test_non_finite_or_non_integer_numbers_in_config_are_refused_naming_the_setting(
    workspace, isolated_home, line, says
):
    (isolated_home / "config.toml").write_text(line + "\n")
    r = one_shot(workspace)
    assert r.exit_code == 1 and says in r.stderr, r.stderr
    assert not (isolated_home / "sessions").exists()  # refused before anything was created


@pytest.mark.parametrize(
    "line", ["temperature = 5", "max_retries = -1", "context_window = 10", "slow_reply_notice = -3"]
)
def test_numbers_out_of_range_in_config_are_refused(workspace, isolated_home, line):
    (isolated_home / "config.toml").write_text(line + "\n")
    r = one_shot(workspace)
    assert r.exit_code == 1 and "is out of range: it must be between" in r.stderr and line.split()[0] in r.stderr


def test_a_state_directory_below_a_regular_file_is_a_clear_error(workspace, tmp_path):
    (tmp_path / "file").write_text("")
    r = CliRunner().invoke(
        app,
        ["-p", "hi", "--base-url", closed_port_url(), "-C", str(workspace)],
        env={"NANOHERMES_HOME": str(tmp_path / "file" / "home")},
    )
    assert r.exit_code == 1 and "Not a directory" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def _read_only_run(home: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """The CLI with `home` read-only, as a normal user meets it: mode 0555, or for a root test run
    (root ignores modes) a read-only bind mount in a private mount namespace."""
    env = {**os.environ, "NANOHERMES_HOME": str(home)}
    if os.geteuid() != 0:
        os.chmod(home, 0o555)
        return subprocess.run([BIN, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    if shutil.which("unshare") is None:
        pytest.skip("running as root without unshare: no way to make a directory read-only for root")
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    r = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, str(home), BIN, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if "mount:" in r.stderr or "unshare:" in r.stderr:
        pytest.skip(f"running as root and cannot mount read-only here: {r.stderr.strip()}")
    return r


def test_a_read_only_state_directory_is_a_clear_error(tmp_path, workspace):
    home = tmp_path / "home"
    home.mkdir()
    r = _read_only_run(home, ["-p", "hi", "--base-url", closed_port_url()], workspace)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"Cannot use the state directory {home}" in r.stderr and "Make it writable" in r.stderr


def test_a_session_lock_that_is_a_directory_is_a_clear_error(workspace, isolated_home):
    (isolated_home / "sessions" / "x.jsonl.lock").mkdir(parents=True)
    r = one_shot(workspace, "--session", "x")
    assert r.exit_code == 1 and "Cannot lock session 'x'" in r.stderr and "Is a directory" in r.stderr


def test_a_session_name_ending_in_a_newline_is_refused(workspace, isolated_home):
    r = one_shot(workspace, "--session", "con\n")
    assert r.exit_code == 1 and "Session name 'con\\n' is not allowed" in r.stderr
    assert not list((isolated_home / "sessions").glob("con*")) if (isolated_home / "sessions").exists() else True
