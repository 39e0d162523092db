"""Rules and modes through the CLI's one-shot runs (`-p`), against the scripted server with real
tools, real files and the real sandbox: what a script may allow, what a repository may not."""

from __future__ import annotations

import json

from nanohermes.cli import ASK_RULE_HINT, cannot_ask_hint
from nanohermes.permissions.saved import saved_grants_path
from tests.support.scripted_server import call, text
from tests.test_cli_sessions import ask


def results(server) -> list[str]:
    return [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "tool"]


def project_rules(workspace, body: str) -> None:
    (workspace / ".nanohermes").mkdir(exist_ok=True)
    (workspace / ".nanohermes" / "config.toml").write_text(body)


def test_a_repository_cannot_allow_itself_an_edit(server, workspace):
    project_rules(workspace, '[permissions]\nallow = ["write_file", "run_command(unsandboxed):*"]\n')
    server.add(call("write_file", {"path": "out.txt", "content": "x"}), text("could not"))
    r = ask(server, workspace, "write", "--mode", "ask")
    assert r.returncode == 3 and not (workspace / "out.txt").exists()
    assert "ignored allow = [write_file, run_command(unsandboxed):*]: a repository cannot grant itself" in r.stderr
    assert "needs the user's approval" in results(server)[0]


def test_a_deny_rule_wins_over_yes_from_the_command_line_the_config_and_the_project(server, workspace, isolated_home):
    (isolated_home / "config.toml").write_text('[permissions]\ndeny = ["write_file:secrets/**"]\n')
    project_rules(workspace, '[permissions]\ndeny = ["run_command:git push *"]\n')
    (workspace / "keep").mkdir()
    server.add(
        call("run_command", {"command": "rm -rf keep"}),
        call("write_file", {"path": "secrets/key.txt", "content": "x"}),
        call("run_command", {"command": "git status && git push origin main"}),
        call("write_file", {"path": "ok.txt", "content": "fine"}),
        text("done"),
    )
    r = ask(server, workspace, "go", "--yes", "--deny", "run_command:rm *")
    assert r.returncode == 0 and (workspace / "keep").is_dir() and not (workspace / "secrets").exists()
    denied, secret, push, ok = results(server)
    assert ok.startswith("write_file ok.txt")
    assert denied.startswith("refused: a deny rule (run_command:rm *, from the command line) forbids")
    assert "(write_file:secrets/**, from config.toml)" in secret
    assert "(run_command:git push *, from the project's .nanohermes/config.toml)" in push
    assert (workspace / "ok.txt").read_text() == "fine"


def test_an_ask_rule_under_yes_refuses_a_call_a_script_cannot_ask_about(server, workspace, isolated_home):
    (isolated_home / "config.toml").write_text('[permissions]\nask = ["write_file"]\n')
    server.add(call("write_file", {"path": "out.txt", "content": "x"}), text("could not"))
    r = ask(server, workspace, "write", "--yes")
    assert r.returncode == 3 and not (workspace / "out.txt").exists()
    assert "An ask rule (write_file, from config.toml) makes it ask every time" in results(server)[0]
    assert ASK_RULE_HINT in r.stderr and "--allow" not in r.stderr  # no flag would allow it


def test_allow_lets_a_script_edit_and_run_a_command_outside_the_sandbox_without_yes(server, workspace, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    server.add(
        call("write_file", {"path": "src/a.py", "content": "x = 1\n"}),
        call("run_command", {"command": "touch built.flag", "unsandboxed": True, "reason": "needs the network"}),
        call("write_file", {"path": "docs/a.md", "content": "no"}),
        text("done"),
    )
    r = ask(
        server,
        workspace,
        "go",
        "--mode",
        "ask",
        "--allow",
        "write_file:src/**",
        "--allow",
        "run_command(unsandboxed):touch *",
    )
    assert (workspace / "src" / "a.py").read_text() == "x = 1\n" and (workspace / "built.flag").exists()
    assert r.returncode == 3 and not (workspace / "docs").exists()  # not allowed: refused, and the hint says how
    assert "--allow write_file:docs/a.md" in results(server)[2]
    assert cannot_ask_hint(["write_file:docs/a.md"]) in r.stderr


def test_a_plain_allow_rule_does_not_let_a_command_leave_the_sandbox_and_the_hint_names_the_form_that_would(
    server, workspace
):
    server.add(
        call("run_command", {"command": "touch x.flag", "unsandboxed": True, "reason": "because"}),
        text("done"),
    )
    r = ask(server, workspace, "go", "--mode", "ask", "--allow", "run_command:touch *")
    assert r.returncode == 3 and not (workspace / "x.flag").exists()
    assert "--allow 'run_command(unsandboxed):touch x.flag'" in results(server)[0]


def test_accept_edits_lets_a_script_edit_but_not_run_outside_the_sandbox_nor_touch_git_hooks(server, workspace):
    (workspace / ".git" / "hooks").mkdir(parents=True)
    server.add(
        call("write_file", {"path": "notes.md", "content": "edited\n"}),
        call("edit_file", {"path": "notes.md", "old_text": "edited", "new_text": "edited twice"}),
        call("write_file", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch PWNED\n"}),
        call("run_command", {"command": "touch out.flag", "unsandboxed": True, "reason": "needs it"}),
        text("done"),
    )
    r = ask(server, workspace, "go", "--mode", "accept-edits")
    assert (workspace / "notes.md").read_text() == "edited twice\n"
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists() and not (workspace / "out.flag").exists()
    assert r.returncode == 3
    _, _, hook, unsandboxed = results(server)
    assert "needs the user's approval" in hook and "--allow 'run_command(unsandboxed):touch out.flag'" in unsandboxed
    assert "Mode: accept-edits." in server.chat_requests()[0]["messages"][0]["content"]


def test_a_rule_that_is_not_one_is_an_error_naming_it(server, workspace, isolated_home):
    r = ask(server, workspace, "go", "--allow", "run command")
    assert r.returncode == 1 and "--allow 'run command': 'run command' is not a rule" in r.stderr
    project_rules(workspace, '[permissions]\ndeny = ["remember:x"]\n')
    r = ask(server, workspace, "go")
    assert (
        r.returncode == 1 and ".nanohermes/config.toml: [permissions] deny: 'remember:x': remember takes no" in r.stderr
    )


def test_a_corrupt_saved_answers_file_is_said_and_left_untouched(server, workspace, isolated_home):
    path = saved_grants_path(isolated_home, workspace.resolve())
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    server.add(call("write_file", {"path": "a.txt", "content": "x"}), text("done"))
    r = ask(server, workspace, "go", "--mode", "ask")
    assert f"{path} is corrupt" in r.stderr and "left untouched" in r.stderr
    assert path.read_text() == "{not json" and r.returncode == 3


def test_saved_answers_are_kept_by_workspace_under_the_state_directory(server, workspace, isolated_home):
    from nanohermes.permissions.grants import PATH, Grant
    from nanohermes.permissions.saved import SavedGrants

    SavedGrants(isolated_home, workspace.resolve()).add(Grant(PATH, "a.txt"))
    saved = json.loads(saved_grants_path(isolated_home, workspace.resolve()).read_text())
    assert saved == {
        "version": 1,
        "workspace": str(workspace.resolve()),
        "grants": [{"kind": "path", "scope": "a.txt"}],
    }
    server.add(call("write_file", {"path": "a.txt", "content": "x"}), text("done"))
    assert ask(server, workspace, "go", "--mode", "ask").returncode == 0 and (workspace / "a.txt").exists()
    other = workspace.parent / "other"
    other.mkdir()
    server.add(call("write_file", {"path": "a.txt", "content": "x"}), text("done"))
    assert ask(server, other, "go", "--mode", "ask").returncode == 3  # another workspace: not granted there
