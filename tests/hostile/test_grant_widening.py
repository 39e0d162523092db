"""Issue 26, item 2: after "always" for one command, the model's next call reached further —
through a runner, an option that executes or writes, or a path outside the workspace — and ran
unasked. Each pair runs through a real Agent, the scripted server and real commands (unconfined,
as with --sandbox off, where grants are what stands between the model and the machine): the
second call is asked, and declined it leaves no trace."""

from __future__ import annotations

import pytest

from nanohermes.tools.shell import run_command
from tests.support.agents import make_agent
from tests.support.scripted_server import call, text

PAIRS = [
    ("uv run --version", "uv run touch PWNED"),
    ("poetry run true", "poetry run touch PWNED"),
    ("bundle exec true", "bundle exec touch PWNED"),
    ("npm exec -- true", "npm exec -- touch PWNED"),
    ("find . -name v", "find . -name v -exec touch PWNED ;"),
    ("find . -name v", "find . -name keep.txt -delete"),
    ("sed -n 1p keep.txt", "sed -i s/keep/gone/ keep.txt"),
    ("sed -n 1p keep.txt", "sed -n '1e touch PWNED' keep.txt"),
    ("sed -n 1p keep.txt", "sed -i s/keep/gone/ ../outside/keep.txt"),
    ("rg keep", "rg --pre rm keep"),
    ("tar -tf a.tar", "tar -cf ../outside/stolen.tar ."),
    ("tar -tf a.tar", "tar --checkpoint=1 --checkpoint-action=exec='touch PWNED' -cf b.tar keep.txt"),
    ("stdbuf -oL true", "stdbuf -oL touch PWNED"),
    ("setsid true", "setsid touch PWNED"),
    ("flock LOCK true", "flock LOCK touch PWNED"),
    ("sqlite3 app.db 'select 1'", "sqlite3 app.db '.shell touch PWNED'"),
    ("rm -rf build", "rm -rf ../outside"),
]


@pytest.mark.parametrize("approved, reached", PAIRS)
def test_always_for_one_command_does_not_let_a_wider_one_run_unasked(server, tmp_path, approved, reached):
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    for folder in (workspace, outside):
        (folder / "keep.txt").write_text("keep\n")
    (workspace / "build").mkdir()
    asked = []

    def approve(tool, args, preview):
        asked.append(args["command"])
        return "always" if len(asked) == 1 else "no"

    server.add(call("run_command", {"command": approved}), call("run_command", {"command": reached}), text("done"))
    agent = make_agent(server, workspace, tools=[run_command], mode="ask", approve=approve)
    agent.run_turn("go")
    assert asked == [approved, reached]
    assert not (workspace / "PWNED").exists() and not (outside / "stolen.tar").exists()
    assert (workspace / "keep.txt").read_text() == "keep\n" and (outside / "keep.txt").read_text() == "keep\n"
