"""Issue 44, item 3: a command file's output was expanded again — `!cat notes.txt` printing `@.env`
attached the gitignored .env; `$ARGUMENTS` reached `!` lines unquoted (`/x hi; touch INJ` ran `touch
INJ`) and a line break in the arguments became a new `!` line; a repository command's own `@.env`
sent a gitignored secret. Through the real CLI; the `!` lines run (--yes, no sandbox) so that what
they could do, they would."""

from __future__ import annotations

import json
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from nanohermes.cli import app
from nanohermes.prompt.commands import expand
from tests.support.scripted_server import text

SECRET = "DB_PASSWORD=hunter2-very-secret"
SHELL_TIMEOUT_S = 30  # one echo in bash; generous for a loaded machine


def one_shot(server, workspace, task: str):
    r = CliRunner().invoke(
        app, ["-p", task, "--base-url", server.url, "-C", str(workspace), "--yes", "--sandbox", "off"]
    )
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r


def command(workspace, name: str, body: str, where: str = ".claude") -> None:
    path = workspace / where / "commands" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)


@pytest.fixture
def secrets(workspace):
    (workspace / ".gitignore").write_text(".env\n")
    (workspace / ".env").write_text(SECRET + "\n")
    (workspace / "README.md").write_text("# the readme\n")
    return workspace


def sent(server) -> str:
    return json.dumps(server.chat_requests())


def test_a_bang_commands_output_is_never_read_for_file_names(server, secrets):
    (secrets / "notes.txt").write_text("see @.env and README.md\n")
    command(secrets, "notes", "Summarise:\n!cat notes.txt\n")
    server.add(text("ok"))
    r = one_shot(server, secrets, "/notes")
    assert r.exit_code == 0, r.stderr
    assert "see @.env and README.md" in sent(server)  # the output itself reaches the model
    assert "hunter2" not in sent(server) and "the readme" not in sent(server)  # nothing it names is attached


def test_arguments_reach_a_bang_line_as_quoted_words_never_as_commands(server, workspace):
    command(workspace, "x", 'Echoed:\n!echo $ARGUMENTS\n!echo "$1"\n')
    server.add(text("ok"))
    r = one_shot(server, workspace, '/x \'hi; touch INJ\' $(touch INJ2) "a\\"; touch INJ3; \\""')
    assert r.exit_code == 0, r.stderr
    assert not any((workspace / name).exists() for name in ("INJ", "INJ2", "INJ3"))
    assert "hi; touch INJ" in sent(server)


def test_a_line_break_in_the_arguments_never_becomes_a_bang_line(server, workspace):
    command(workspace, "x", "Say $ARGUMENTS\n!echo $1\n")
    server.add(text("ok"))
    r = one_shot(server, workspace, "/x hello\n!touch INJ")
    assert r.exit_code == 0, r.stderr
    assert not (workspace / "INJ").exists()


def test_a_repository_commands_own_at_word_never_attaches_a_gitignored_file(server, secrets):
    command(secrets, "ctx", "Use @.env and @README.md for context.")
    server.add(text("ok"), text("ok"))
    one_shot(server, secrets, "/ctx")
    first = json.dumps(server.chat_requests()[0])
    assert "hunter2" not in first and "the readme" in first  # a file .gitignore leaves in is attached
    one_shot(server, secrets, "/ctx @.env")  # the user's own word: theirs to send
    assert "hunter2" in json.dumps(server.chat_requests()[1])


def test_the_users_own_command_file_names_files_as_the_user_does(server, secrets, isolated_home):
    mine = isolated_home / "commands" / "env.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("Check @.env for typos.")
    server.add(text("ok"))
    one_shot(server, secrets, "/env")
    assert "hunter2" in sent(server)


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab ;&|$()`'\"\\\n!*<>")), max_size=24))
def test_no_arguments_make_a_bang_line_do_more_than_the_file_wrote(tmp_path_factory, arguments):
    """Whatever the arguments (`;`, `|`, `>a`, `$(b)`, quotes of either kind, line breaks), each `!`
    line the file wrote runs as one echo in bash itself: no file made, no other command run."""
    ran: list[str] = []
    for body in ("!echo $ARGUMENTS", '!echo "$ARGUMENTS"', "!echo '$1'", "say !`echo $2`"):
        assert expand(body, arguments, lambda line: ran.append(line) or "").ran == 1
    where = tmp_path_factory.mktemp("bang")
    for line in ran:
        assert "\n" not in line
        done = subprocess.run(["bash", "-c", line], cwd=where, capture_output=True, text=True, timeout=SHELL_TIMEOUT_S)
        assert done.returncode == 0 and done.stderr == "", (line, done.stderr)
    assert list(where.iterdir()) == []
