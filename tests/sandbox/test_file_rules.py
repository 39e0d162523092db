"""The file rules both Linux backends enforce, checked on the real file system."""

from __future__ import annotations

import pytest

from tests.sandbox.conftest import BACKENDS, KEY, run_in


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_write_outside_the_workspace_fails_and_the_file_does_not_exist(backend, policy, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    done = run_in(policy, f"echo escaped > {outside}/x", backend)
    assert done.returncode != 0
    assert not (outside / "x").exists()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_write_inside_the_workspace_works(backend, policy, workspace):
    done = run_in(policy, "mkdir -p src && echo made > src/new.txt && mv src/new.txt src/moved.txt", backend)
    assert done.returncode == 0, done.stderr
    assert (workspace / "src" / "moved.txt").read_text() == "made\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_tmpdir_is_the_private_temp_dir_and_is_writable(backend, policy):
    done = run_in(
        policy, 'echo kept > "$TMPDIR/scratch" && python3 -c "import tempfile; print(tempfile.gettempdir())"', backend
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(policy.temp_dir)
    assert (policy.temp_dir / "scratch").read_text() == "kept\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_state_directory_cannot_be_written(backend, policy, isolated_home):
    (isolated_home / "memory.json").write_text("{}")
    done = run_in(
        policy, f"echo '{{\"evil\": 1}}' > {isolated_home}/memory.json; mkdir {isolated_home}/skills", backend
    )
    assert done.returncode != 0
    assert (isolated_home / "memory.json").read_text() == "{}"
    assert not (isolated_home / "skills").exists()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_private_key_in_home_cannot_be_read(backend, policy, fake_home):
    done = run_in(policy, "cat ~/.ssh/id_rsa; cat $HOME/.ssh/id_rsa", backend)
    assert done.returncode != 0
    assert KEY not in done.stdout
    assert (fake_home / ".ssh" / "id_rsa").read_text() == KEY  # hidden, not harmed


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_hidden_key_cannot_be_reached_through_a_link_in_the_workspace(backend, policy, fake_home, workspace):
    (workspace / "keys").symlink_to(fake_home / ".ssh")
    done = run_in(policy, "cat keys/id_rsa", backend)
    assert done.returncode != 0
    assert KEY not in done.stdout


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_sessions_and_config_of_nanohermes_cannot_be_read(backend, policy, isolated_home):
    (isolated_home / "config.toml").write_text('api_key = "sk-secret"\n')
    (isolated_home / "sessions").mkdir()
    (isolated_home / "sessions" / "s1.jsonl").write_text('{"secret": "transcript"}\n')
    done = run_in(policy, f"cat {isolated_home}/config.toml {isolated_home}/sessions/s1.jsonl", backend)
    assert "sk-secret" not in done.stdout and "transcript" not in done.stdout


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_only_level_blocks_writes_in_the_workspace_but_not_the_temp_dir(backend, make_policy, workspace):
    policy = make_policy(level="read-only")
    done = run_in(policy, 'echo x > "$TMPDIR/ok" && echo x > in-workspace', backend)
    assert done.returncode != 0
    assert (policy.temp_dir / "ok").exists()
    assert not (workspace / "in-workspace").exists()


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_multiprocessing_locks_work_inside(backend, policy):
    done = run_in(policy, "python3 -c \"import multiprocessing as m; m.Lock(); print('locked')\"", backend)
    assert done.stdout.strip() == "locked", done.stderr
