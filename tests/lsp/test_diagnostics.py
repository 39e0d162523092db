"""Diagnostics after write_file and edit_file from a real language server (python-lsp-server with
pyflakes, from the test extras) and from misbehaving ones: new problems are said, old ones never;
whatever the server does, the change is made and the call succeeds. Timeouts are injected: a long
one where a server must answer, a short one only where it never will (tests/support/timing.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from nanohermes.lsp import MAX_SLOW_CHECKS, Diagnostics
from nanohermes.lsp.settings import parse_lsp_table
from nanohermes.tools import ToolContext, dispatch
from nanohermes.tools.diagnosed import MADE
from nanohermes.tools.edit import edit_file
from nanohermes.tools.files import write_file
from tests.support.lsp_servers import fake_command, lsp_table, pylsp_command
from tests.support.timing import HANG_GUARD_S

pytestmark = pytest.mark.subprocess  # each test starts a server process
TOOLS = {t.name: t for t in (edit_file, write_file)}
NEVER_ANSWERED_S = 0.05  # the wait for a server that never answers: fires whatever its start took


def diagnostics(workspace: Path, command: list[str], warnings: list[str] | None = None, **keys) -> Diagnostics:
    keys = {"timeout": HANG_GUARD_S, "startup_timeout": HANG_GUARD_S, **keys}
    table = parse_lsp_table(lsp_table(command, **keys), workspace / "config.toml")
    return Diagnostics(table, workspace, None, warn=(warnings.append if warnings is not None else None))


@pytest.fixture
def checked(workspace, isolated_home):
    """A tool context whose changes pylsp checks; its server ended after the test."""
    made = []

    def make(command=None, warnings=None, **keys) -> ToolContext:
        made.append(diagnostics(workspace, command or pylsp_command(), warnings, **keys))
        return ToolContext(workspace=workspace, home=isolated_home, diagnostics=made[-1])

    yield make
    for each in made:
        each.close()


def edit(ctx, path, old, new):
    return dispatch(ctx, TOOLS, "edit_file", {"path": path, "old_text": old, "new_text": new})


def note(result) -> str:
    """What the result says after the change's own report (whose diff quotes the file)."""
    return MADE + result.content.split(MADE, 1)[1] if MADE in result.content else ""


def test_an_edit_that_introduces_an_undefined_name_says_it_and_not_the_problem_already_there(checked, workspace):
    (workspace / "app.py").write_text("import os\n\nprint(old_missing)\n")
    result = edit(checked(), "app.py", "import os\n", "import os\n\nbar()\nprint(os.sep)\n")
    assert result.ok
    assert note(result) == f"{MADE}; new problems in app.py (pylsp):\n  3:1 undefined name 'bar'"
    assert "bar()" in (workspace / "app.py").read_text()


def test_a_later_edit_of_the_same_file_says_only_what_it_added(checked, workspace):
    (workspace / "app.py").write_text("x = 1\n")
    ctx = checked()
    first = edit(ctx, "app.py", "x = 1\n", "x = 1\ny = first_missing\n")
    second = edit(ctx, "app.py", "x = 1\n", "\n\nx = 1\nz = second_missing\n")
    assert note(first).endswith("2:5 undefined name 'first_missing'")
    assert note(second).endswith("\n  4:5 undefined name 'second_missing'") and note(second).count("\n  ") == 1


def test_an_edit_that_fixes_or_adds_no_error_adds_nothing(checked, workspace):
    (workspace / "app.py").write_text("print(missing)\n")
    result = edit(checked(), "app.py", "print(missing)\n", "import os\nprint(os.sep)\n")  # an unused import: a warning
    assert result.ok and MADE not in result.content


def test_warnings_are_said_when_asked_for(checked, workspace):
    (workspace / "app.py").write_text("x = 1\n")
    result = edit(checked(severity="warning"), "app.py", "x = 1\n", "import json\nx = 1\n")
    assert "1:1 warning: 'json' imported but unused" in result.content


def test_a_new_file_written_with_an_undefined_name_says_it(checked, workspace):
    ctx = checked()
    path = "my pkg/nouveauté.py"  # its URI is quoted: %20, %C3%A9
    result = dispatch(ctx, TOOLS, "write_file", {"path": path, "content": "def f():\n    return nowhere\n"})
    assert result.ok and note(result) == f"{MADE}; new problems in {path} (pylsp):\n  2:12 undefined name 'nowhere'"
    other = dispatch(ctx, TOOLS, "write_file", {"path": "notes.txt", "content": "nowhere\n"})
    assert other.ok and MADE not in other.content  # no server for .txt files


def test_a_server_that_exits_at_once_is_one_notice_and_the_edit_is_made(checked, workspace):
    (workspace / "app.py").write_text("x = 1\n")
    warnings = []
    ctx = checked([sys.executable, "-c", "import sys; sys.exit('no server here')"], warnings)
    result = edit(ctx, "app.py", "x = 1\n", "x = undefined_one\n")
    assert result.ok and (workspace / "app.py").read_text() == "x = undefined_one\n"
    assert f"{MADE}; no diagnostics: python did not start: it exited (code 1): no server here" in result.content
    assert "they are off for python files this session" in result.content
    again = edit(ctx, "app.py", "x = undefined_one\n", "x = undefined_two\n")
    assert again.ok and MADE not in again.content  # said once
    assert len(warnings) == 1 and "no server here" in warnings[0]


def test_a_server_that_never_publishes_hits_the_injected_timeout_and_is_stopped_after_a_few(checked, workspace):
    (workspace / "app.py").write_text("x = 0\n")
    warnings = []
    ctx = checked(fake_command("mute"), warnings, timeout=NEVER_ANSWERED_S)
    results = [edit(ctx, "app.py", f"x = {i}\n", f"x = {i + 1}\n") for i in range(MAX_SLOW_CHECKS + 1)]
    assert all(r.ok for r in results) and (workspace / "app.py").read_text() == f"x = {MAX_SLOW_CHECKS + 1}\n"
    for slow in results[: MAX_SLOW_CHECKS - 1]:
        assert f"{MADE}; diagnostics did not come in {NEVER_ANSWERED_S:g} s" in slow.content
    assert f"did not answer {MAX_SLOW_CHECKS} checks in a row" in results[MAX_SLOW_CHECKS - 1].content
    assert MADE not in results[-1].content and len(warnings) == 1


def test_a_server_that_never_answers_initialize_hits_the_startup_timeout(checked, workspace):
    (workspace / "app.py").write_text("x = 0\n")
    result = edit(checked(fake_command("silent"), startup_timeout=NEVER_ANSWERED_S), "app.py", "x = 0\n", "x = 1\n")
    assert result.ok and f"did not answer initialize in {NEVER_ANSWERED_S:g} s (startup_timeout)" in result.content


def test_a_configured_program_that_is_missing_is_said_and_the_default_missing_is_not(checked, workspace, monkeypatch):
    (workspace / "app.py").write_text("x = 0\n")
    named = edit(checked(["no-such-language-server"]), "app.py", "x = 0\n", "x = 1\n")
    assert named.ok and "no diagnostics: no-such-language-server is not on PATH" in named.content
    monkeypatch.setenv("PATH", "/nonexistent")
    default = Diagnostics((), workspace, None)
    assert default.after_change(workspace / "app.py", "app.py", "x = 1\n", "x = 2\n") == ""


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize("server", ["pylsp", "stubborn"])
def test_the_server_ends_with_the_session_and_one_that_ignores_exit_is_killed(workspace, tmp_path, server):
    pidfile = tmp_path / "pid"
    if server == "pylsp":  # the pid of the real server: bash execs it in place
        command = ["bash", "-c", f'echo $$ > {pidfile}; exec "$0" -m pylsp', sys.executable]
    else:
        command = fake_command("stubborn", pidfile)
    checker = diagnostics(workspace, command, timeout=NEVER_ANSWERED_S if server == "stubborn" else HANG_GUARD_S)
    (workspace / "app.py").write_text("x = 0\n")
    checker.after_change(workspace / "app.py", "app.py", "x = 0\n", "x = 1\n")
    pid = int(pidfile.read_text())
    assert not _gone(pid)
    checker.close()
    assert _gone(pid)
