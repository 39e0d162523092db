"""A project's saved answers (permissions/saved.py) as the approvals use them: real files under
a temp state directory."""

from __future__ import annotations

from nanohermes.loop.approvals import Approvals
from nanohermes.permissions.grants import EXACT_COMMAND, PATH, Grant
from nanohermes.permissions.saved import SavedGrants, saved_grants_path


def approvals(home, workspace) -> Approvals:
    return Approvals("ask", lambda tool, args, preview: "yes", saved=SavedGrants(home, workspace))


def test_always_survives_reset_and_is_seen_by_another_session_of_the_project_while_session_ones_are_not(tmp_path):
    home, workspace = tmp_path / "home", tmp_path / "ws"
    first = approvals(home, workspace)
    first.keep(Grant(PATH, "a.txt"))
    first.grant(Grant(PATH, "b.txt"))
    first.reset()
    assert first.grants == [Grant(PATH, "a.txt")]
    second = approvals(home, workspace)
    assert second.grants == [Grant(PATH, "a.txt")]
    second.keep(Grant(EXACT_COMMAND, "make deploy", unsandboxed=True))
    assert first.grants == [Grant(PATH, "a.txt"), Grant(EXACT_COMMAND, "make deploy", unsandboxed=True)]
    first.revoke(Grant(PATH, "a.txt"))
    assert second.grants == [Grant(EXACT_COMMAND, "make deploy", unsandboxed=True)]
    assert approvals(home, tmp_path / "other").grants == []


def test_a_corrupt_file_is_left_untouched_and_always_then_lasts_for_the_session(tmp_path):
    home, workspace = tmp_path / "home", tmp_path / "ws"
    path = saved_grants_path(home, workspace)
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 1, "workspace": "elsewhere", "grants": []}')
    warnings = []
    answers = Approvals("ask", None, saved=SavedGrants(home, workspace), warn=warnings.append)
    assert answers.grants == [] and "belongs to 'elsewhere'" in answers.saved.problem
    answers.keep(Grant(PATH, "a.txt"))
    assert answers.grants == [Grant(PATH, "a.txt")] and "for this session only" in warnings[0]
    assert path.read_text() == '{"version": 1, "workspace": "elsewhere", "grants": []}'


def test_a_fifo_in_place_of_the_file_is_not_read(tmp_path):
    import os

    home, workspace = tmp_path / "home", tmp_path / "ws"
    path = saved_grants_path(home, workspace)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    saved = SavedGrants(home, workspace)
    assert saved.grants() == [] and "cannot read" in saved.problem
