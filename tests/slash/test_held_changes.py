"""/tasks diff|apply|drop NAME, the table's row both front ends run, on the changes of helpers in
worktrees that were not brought in: the held diff is a Diff block, applying asks nothing (the user
acts, so an editor offers it as the REPL does) and writes through the checkpoints, and the model is
told once, tagged, of each apply or drop. Real git, the real runtime, the scripted server."""

from __future__ import annotations

from nanohermes.acp import commands as editor_commands
from nanohermes.acp.outcome_view import markdown
from nanohermes.loop.nudges import HELPER_CHANGES
from nanohermes.slash.outcome import Diff
from nanohermes.slash.table import COMMANDS, EDITOR, REPL, run_command
from nanohermes.synthetic import synthetic_kind
from tests.loop.test_worktree_helpers import A_NEW, two_held
from tests.support.git_repos import make_repo


def test_an_editor_shows_applies_and_drops_a_helpers_held_changes_as_the_repl_does(server, tmp_path, monkeypatch):
    assert COMMANDS["/tasks"].offered == {REPL, EDITOR}
    repo = make_repo(tmp_path / "repo", {"a.py": "a = 1\n", "b.py": "b = 1\n"})
    runtime = two_held(server, repo, monkeypatch)
    by_file = {held.changes[0].path: name for name, held in runtime.agent.helpers.held.items()}
    a, b = by_file["a.py"], by_file["b.py"]
    assert f"{a} held: 1 file not brought in" in markdown(editor_commands.take("/tasks", runtime))
    (shown,) = run_command(runtime, COMMANDS["/tasks"], f"diff {a}").blocks
    assert isinstance(shown, Diff) and "+a = 'from helper A'" in shown.lines
    assert "```diff\n" in markdown(editor_commands.take(f"/tasks diff {a}", runtime))
    assert markdown(editor_commands.take(f"/tasks apply {a}", runtime)) == f"{a}: applied a.py"
    assert markdown(editor_commands.take(f"/tasks drop {b}", runtime)) == f"{b}: dropped, its worktree removed"
    assert (repo / "a.py").read_text() == A_NEW and (repo / "b.py").read_text() == "b = 1\n"
    assert [c.shown for c in runtime.checkpoints.changes()] == ["a.py"]  # /undo takes it back
    notes = [m for m in runtime.agent.messages if synthetic_kind(m) == HELPER_CHANGES and m["role"] == "user"]
    assert [n["content"].split(" held changes")[0] for n in notes] == [
        f"[the user brought in helper 'helper A''s ({a})",
        f"[the user dropped helper 'helper B''s ({b})",
    ]
    assert markdown(editor_commands.take(f"/tasks apply {a}", runtime)) == (
        f"no helper's changes are held as {a!r} (held: none)"
    )
    runtime.close()
