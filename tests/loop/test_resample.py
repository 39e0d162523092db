"""The small strategy samples a model that went round in circles on its next request: at temperature 0
the same conversation brings the same call again (Qwen2.5-Coder-1.5B wrote the same failing file three
times running). Through the real CLI (`-p --coach small`) and the scripted server over real HTTP."""

from __future__ import annotations

from typer.testing import CliRunner

from nanohermes.cli import app
from nanohermes.loop.coach.small_texts import RESAMPLE_TEMPERATURE
from tests.support.scripted_server import call, text


def run(server, workspace, *args):
    return CliRunner().invoke(
        app,
        ["-p", "what does notes.txt say?", "--yes", "--coach", "small", "--base-url", server.url, "-C", str(workspace)]
        + list(args),
    )


def temperatures(server) -> list:
    return [r.get("temperature") for r in server.chat_requests()]


def test_the_request_after_a_repeated_look_is_sampled_and_the_next_one_is_not(server, workspace, isolated_home):
    (workspace / "notes.txt").write_text("a\n")
    server.add(*[call("read_file", {"path": "notes.txt"}) for _ in range(2)], call("glob", {"pattern": "*"}))
    server.add(text("It says a."))
    assert run(server, workspace).exit_code == 0
    assert temperatures(server) == [0.0, 0.0, RESAMPLE_TEMPERATURE, 0.0]


def test_a_configured_temperature_above_the_resampling_one_is_kept(server, workspace, isolated_home):
    (workspace / "notes.txt").write_text("a\n")
    (isolated_home / "config.toml").write_text("temperature = 1.0\n")
    server.add(*[call("read_file", {"path": "notes.txt"}) for _ in range(2)], text("It says a."))
    assert run(server, workspace).exit_code == 0
    assert temperatures(server) == [1.0, 1.0, 1.0]


def test_the_request_after_a_write_that_changed_nothing_is_sampled(server, workspace):
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    same = {"path": "calc.py", "content": "def add(a, b):\n    return a + b\n"}
    server.add(call("write_file", same), call("write_file", same), text("Fixed."))
    assert run(server, workspace).exit_code == 0
    assert temperatures(server) == [0.0, 0.0, RESAMPLE_TEMPERATURE]
