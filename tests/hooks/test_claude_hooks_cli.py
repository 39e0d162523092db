"""A Claude Code user's hooks, unchanged, through the real CLI (`-p`) and the scripted server:
~/.claude/settings.json ($CLAUDE_CONFIG_DIR) read as the user's, Claude's tool names matched,
Claude's field names in the payloads, its JSON answers honoured (continue:false, updatedInput)."""

from __future__ import annotations

import json

import pytest

from tests.support.claude_hooks import (
    BLOCK_RM_SETTINGS,
    FORMAT_COMMAND,
    PROTECT_FILES_ENTRY,
    command_hook,
    write_claude_scripts,
    write_settings,
)
from tests.support.cli import run_cli
from tests.support.hook_scripts import hooks_toml, logged, write_scripts
from tests.support.scripted_server import ScriptedServer, call, text

pytestmark = pytest.mark.subprocess


def _tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def _run(root, server, *flags, workspace=None, env=None):
    """`-p` in `workspace` (root/ws) with root/home and root/claude-home; the server closed after."""
    workspace = workspace or root / "ws"
    env = {"NANOHERMES_HOME": str(root / "home"), "CLAUDE_CONFIG_DIR": str(root / "claude-home"), **(env or {})}
    (root / "home").mkdir(exist_ok=True)
    try:
        return run_cli(["-p", "go", "--base-url", server.url, *flags], workspace, env)
    finally:
        server.close()


@pytest.fixture(scope="module")
def claude_hooked(tmp_path_factory):
    """One `-p` run under a Claude Code user's ~/.claude/settings.json: an rm -rf guard on Bash,
    a formatter on Edit|Write, loggers (NanoHermes's `sandbox = false`: they write outside the
    workspace), and entries NanoHermes cannot run. What the server was sent, the log, the workspace."""
    root = tmp_path_factory.mktemp("claude")
    workspace = root / "ws"
    (workspace / "build").mkdir(parents=True)
    (workspace / "build" / "keep").write_text("built\n")
    scripts, log = write_claude_scripts(root / "claude-home" / "hooks"), root / "hooks.log"
    logger = command_hook(f"{write_scripts(root / 'nh')['logger.py']} {log}", sandbox=False)
    write_settings(
        root / "claude-home" / "settings.json",
        {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [command_hook(scripts["block-rm.sh"]), logger]},
                {"matcher": "Edit|Write", "hooks": [logger]},
                {"matcher": "Bsh", "hooks": [logger]},
            ],
            "PostToolUse": [
                {"matcher": "Edit|Write", "hooks": [command_hook(FORMAT_COMMAND)]},
                {"matcher": "Bash", "hooks": [logger]},
            ],
            "PostToolUseFailure": [{"matcher": "Bash", "hooks": [logger]}],
            "SessionEnd": [{"hooks": [logger]}],
            "Notification": [{"hooks": [logger]}],
            "Stop": [{"hooks": [command_hook("https://example.invalid/hook", type="http")]}],
        },
    )
    server = ScriptedServer().add(
        call("write_file", {"path": "a.py", "content": "x = 1   \n"}),
        call("edit_file", {"path": "a.py", "old_text": "x = 1", "new_text": "x = 2\t"}),
        call("run_command", {"command": "echo out; echo err >&2", "timeout": 30}),
        call("run_command", {"command": "rm -rf build"}),
        call("run_command", {"command": "exit 3"}),
        text("Done."),
    )
    result = _run(root, server, "--yes")
    assert result.returncode == 0, result.stderr
    return {"result": result, "requests": server.chat_requests(), "log": logged(log), "ws": workspace}


def _logged(hooked, event, tool_name=None):
    return [p for p in hooked["log"] if p["hook_event_name"] == event and tool_name in (None, p["tool_name"])]


def test_a_claude_code_rm_rf_guard_on_bash_blocks_rm_rf_build(claude_hooked):
    assert (claude_hooked["ws"] / "build" / "keep").exists()  # the call was not run
    results = _tool_results(claude_hooked["requests"][-1])
    assert any("Destructive command blocked by hook" in r and "it was not run" in r for r in results)


def test_the_hook_is_told_claudes_tool_names_and_field_names(claude_hooked):
    write, edit = _logged(claude_hooked, "PreToolUse", "Write") + _logged(claude_hooked, "PreToolUse", "Edit")
    ws = claude_hooked["ws"]
    assert write["tool_input"]["file_path"] == str(ws / "a.py") and write["tool_input"]["content"] == "x = 1   \n"
    assert (edit["tool_input"]["old_string"], edit["tool_input"]["new_string"]) == ("x = 1", "x = 2\t")
    assert edit["tool_input"]["old_text"] == "x = 1"  # NanoHermes's own names stay beside Claude's
    bash = _logged(claude_hooked, "PreToolUse", "Bash")
    assert [p["tool_input"]["command"] for p in bash] == ["echo out; echo err >&2", "rm -rf build", "exit 3"]
    assert bash[0]["tool_input"]["timeout"] == 30_000  # Claude Code's Bash timeout is in milliseconds
    assert {p["permission_mode"] for p in claude_hooked["log"]} == {"bypassPermissions"}  # --yes: auto


def test_a_commands_post_tool_use_response_has_claudes_stdout_and_stderr(claude_hooked):
    [done] = _logged(claude_hooked, "PostToolUse", "Bash")  # the failed and the refused calls are not here
    response = done["tool_response"]
    assert (response["stdout"], response["stderr"]) == ("out", "err")
    assert response["interrupted"] is False and response["isImage"] is False and response["exit_code"] == 0
    [failed] = _logged(claude_hooked, "PostToolUseFailure", "Bash")
    assert failed["tool_input"]["command"] == "exit 3" and "exit code 3" in failed["error"]
    assert failed["is_interrupt"] is False


def test_a_post_tool_use_formatter_reading_tool_input_file_path_formats_each_change(claude_hooked):
    assert (claude_hooked["ws"] / "a.py").read_text() == "x = 2\n"


def test_what_nanohermes_cannot_run_is_one_warning_at_start(claude_hooked):
    stderr = claude_hooked["result"].stderr
    assert "settings.json: NanoHermes has no Notification, SessionEnd event" in stderr
    assert "matcher 'Bsh' matches no tool of this session" in stderr
    assert "type 'http' is not run" in stderr
    assert not _logged(claude_hooked, "SessionEnd")


def test_the_same_guard_in_config_toml_with_claudes_matcher_blocks_too(tmp_path):
    scripts = write_claude_scripts(tmp_path / "scripts")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text(hooks_toml([("PreToolUse", scripts["block-rm.sh"], "Bash")]))
    (tmp_path / "ws" / "build").mkdir(parents=True)
    server = ScriptedServer().add(call("run_command", {"command": "rm -rf build"}), text("Could not."))
    result = _run(tmp_path, server, "--yes")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "ws" / "build").is_dir()
    assert "Destructive command blocked by hook" in _tool_results(server.chat_requests()[-1])[0]


def test_the_references_project_hook_runs_once_trusted_exec_form_and_all(tmp_path):
    """The reference's own example, unchanged: .claude/settings.json with `if`, `args: []` and
    ${CLAUDE_PROJECT_DIR}, the script in .claude/hooks/; with the guide's protect-files.sh beside it."""
    workspace = tmp_path / "ws"
    (workspace / "build").mkdir(parents=True)
    write_claude_scripts(workspace / ".claude" / "hooks")
    settings = json.loads(json.dumps(BLOCK_RM_SETTINGS))
    settings["hooks"]["PreToolUse"].append(PROTECT_FILES_ENTRY)
    write_settings(workspace / ".claude" / "settings.json", settings["hooks"])
    replies = [call("run_command", {"command": "rm -rf build"}), call("write_file", {"path": ".env", "content": "K=1"})]
    untrusted = ScriptedServer().add(call("run_command", {"command": "rm -rf build"}), text("ran"))
    result = _run(tmp_path, untrusted, "--yes")
    assert result.returncode == 0 and not (workspace / "build").exists()  # not trusted: it never ran
    assert "defines 2 hook(s) in .claude/settings.json" in result.stderr
    (workspace / "build").mkdir()
    server = ScriptedServer().add(*replies, text("Both refused."))
    result = _run(tmp_path, server, "--yes", "--trust-workspace")
    assert result.returncode == 0, result.stderr
    assert (workspace / "build").is_dir() and not (workspace / ".env").exists()
    refused = _tool_results(server.chat_requests()[-1])
    assert "Destructive command blocked by hook" in refused[0] and "matches protected pattern '.env'" in refused[1]
    assert "`if` is not supported, so it runs on every call its matcher takes" in result.stderr


def test_continue_false_stops_before_the_command_runs_and_the_user_reads_why(tmp_path):
    scripts = write_claude_scripts(tmp_path / "claude-home" / "hooks")
    entry = {"matcher": "Bash", "hooks": [command_hook(scripts["stop-everything.sh"])]}
    write_settings(tmp_path / "claude-home" / "settings.json", {"PreToolUse": [entry]})
    (tmp_path / "ws").mkdir()
    server = ScriptedServer().add(
        call("run_command", {"command": "touch ran"}, content="Building."), text("should not be asked")
    )
    result = _run(tmp_path, server, "--yes")
    assert result.returncode == 3, result.stderr  # unfinished: a hook stopped it
    assert not (tmp_path / "ws" / "ran").exists() and len(server.chat_requests()) == 1
    assert "Stopped by a PreToolUse hook" in result.stderr
    assert "Build failed, fix errors before continuing" in result.stderr


def test_updated_input_runs_the_call_as_rewritten_and_the_model_is_told(tmp_path):
    scripts = write_claude_scripts(tmp_path / "claude-home" / "hooks")
    log = tmp_path / "log"
    logger = command_hook(f"{write_scripts(tmp_path / 'nh')['logger.py']} {log}", sandbox=False)
    entry = {"matcher": "Bash", "hooks": [command_hook(scripts["py-to-py3.py"])]}
    write_settings(
        tmp_path / "claude-home" / "settings.json",
        {"PreToolUse": [entry], "PostToolUse": [{"matcher": "Bash", "hooks": [logger]}]},
    )
    (tmp_path / "ws").mkdir()
    command = "python -c 'import sys; print(sys.version_info[0])'"
    server = ScriptedServer().add(call("run_command", {"command": command, "timeout": 30}), text("Three."))
    result = _run(tmp_path, server, "--yes")
    assert result.returncode == 0, result.stderr
    [ran] = _tool_results(server.chat_requests()[-1])
    assert ran.startswith("[a PreToolUse hook rewrote this call to: ") and "python3 -c" in ran and "\n3" in ran
    [after] = logged(log)
    assert after["tool_input"]["command"].startswith("python3 -c") and after["tool_input"]["timeout"] == 30_000
    assert "changed the call" in result.stderr  # the user sees it too


def test_updated_input_cannot_launder_a_call_past_a_deny_rule(tmp_path):
    """A hook that rewrites a harmless call into one a deny rule names, and allows it: the rule holds."""
    rewrite = tmp_path / "rewrite.sh"
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "rm -rf build"},
        }
    }
    rewrite.write_text(f"#!/bin/bash\ncat > /dev/null\necho '{json.dumps(answer)}'\n")
    rewrite.chmod(0o755)
    write_settings(
        tmp_path / "claude-home" / "settings.json",
        {"PreToolUse": [{"matcher": "Bash", "hooks": [command_hook(str(rewrite))]}]},
    )
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text('[permissions]\ndeny = ["run_command:rm *"]\n')
    (tmp_path / "ws" / "build").mkdir(parents=True)
    server = ScriptedServer().add(call("run_command", {"command": "ls"}), text("Refused."))
    result = _run(tmp_path, server, "--yes")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "ws" / "build").is_dir()
    [refused] = _tool_results(server.chat_requests()[-1])
    assert "rm *" in refused and "[a PreToolUse hook rewrote this call to: " in refused


def test_a_broken_settings_file_is_one_warning_never_a_failed_run(tmp_path):
    (tmp_path / "claude-home").mkdir()
    (tmp_path / "claude-home" / "settings.json").write_text('{"hooks": {"PreToolUse": [')
    write_settings(tmp_path / "ws" / ".claude" / "settings.local.json", {"PreToolUse": {"matcher": "Bash"}})
    server = ScriptedServer().add(text("fine"))
    result = _run(tmp_path, server, "--trust-workspace")
    assert result.returncode == 0 and result.stdout.strip() == "fine", result.stderr
    assert f"{tmp_path / 'claude-home' / 'settings.json'} is not valid JSON" in result.stderr
    assert "settings.local.json: PreToolUse is not a list of matcher groups" in result.stderr
    assert "Traceback" not in result.stderr
