"""Hooks through the real CLI (`-p`) and the scripted server: one hooked 20-step session, read by
one test per event, and runs of their own for a blocked prompt and an untrusted workspace."""

from __future__ import annotations

import itertools
import json

import pytest

from nanohermes.loop.subagents import HELPER_BRIEF
from tests.support.cli import run_cli
from tests.support.hook_scripts import hooks_toml, logged, write_scripts
from tests.support.scripted_server import ScriptedServer, call, text

pytestmark = pytest.mark.subprocess

READS = 17  # read_file calls after the write, the push and the helper: 20 tool-call steps, then the answers
START_NOTE = "start note: the build uses make"
PROMPT_NOTE = "prompt note: answer in one line"


@pytest.fixture(scope="module")
def hooked(tmp_path_factory):
    """One `-p` run with hooks on every event; what the server was sent, the log, the workspace."""
    root = tmp_path_factory.mktemp("hooked")
    home, workspace = root / "home", root / "ws"
    home.mkdir()
    workspace.mkdir()
    for i in range(READS):
        (workspace / f"f{i}.txt").write_text(f"file {i}\n")
    (workspace / ".nanohermes").mkdir()  # a repository's hooks, never trusted: they must never run
    untrusted = [(event, f"touch {root / 'untrusted-ran'}", None) for event in ("SessionStart", "PreToolUse", "Stop")]
    (workspace / ".nanohermes" / "config.toml").write_text(hooks_toml(untrusted))
    scripts, log = write_scripts(root / "scripts"), root / "hooks.log"
    logger = f"{scripts['logger.py']} {log}"
    prompt_json = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": PROMPT_NOTE}}
    )
    (home / "config.toml").write_text(
        hooks_toml(
            [
                ("SessionStart", f"{logger} '{START_NOTE}'", None),
                ("UserPromptSubmit", f"{logger} '{prompt_json}'", None),
                ("PreToolUse", scripts["no_push.py"], "run_command"),
                ("PreToolUse", logger, None),
                ("PostToolUse", scripts["formatter.py"], "write_file|edit_file"),  # confined: it writes the workspace
                ("PostToolUse", logger, "read_file", False),  # these write outside it: the user says so
                ("Stop", f"{scripts['stop_once.py']} {root / 'stopped'}", None, False),
                ("Stop", logger, None, False),
                ("SubagentStop", logger, None, False),
            ]
        )
    )
    server = ScriptedServer()
    server.add(
        call("write_file", {"path": "a.py", "content": "x = 1   \ny = 2\t\n"}),
        call("run_command", {"command": "git push origin main; touch pushed"}),
        call("task", {"description": "find the note", "prompt": "Say where the note is."}),
        text("The note is in f3.txt."),  # the helper's answer
        *[call("read_file", {"path": f"f{i}.txt"}) for i in range(READS)],
        text("All read."),  # a Stop hook sends it back once
        text("All read, and the tests pass."),
    )
    env = {"NANOHERMES_HOME": str(home)}
    try:
        result = run_cli(["-p", "read the files", "--base-url", server.url, "--yes"], workspace, env)
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    parent = [r for r in server.chat_requests() if HELPER_BRIEF not in json.dumps(r["messages"][1])]
    return {"result": result, "requests": parent, "log": logged(log), "ws": workspace, "root": root}


def _events(hooked, name):
    return [p for p in hooked["log"] if p["hook_event_name"] == name]


def _tool_result(request, needle):
    return next(m["content"] for m in request["messages"] if m["role"] == "tool" and needle in m["content"])


def test_session_start_output_joins_the_first_user_message(hooked):
    [start] = _events(hooked, "SessionStart")
    assert start["source"] == "startup" and start["cwd"] == str(hooked["ws"]) and start["session_id"]
    first_user = hooked["requests"][0]["messages"][1]
    assert first_user["role"] == "user" and first_user["content"].startswith("read the files\n\n")
    assert f"[SessionStart hook output]\n{START_NOTE}" in first_user["content"]


def test_user_prompt_submit_gets_the_prompt_and_its_context_reaches_the_model(hooked):
    [submitted] = _events(hooked, "UserPromptSubmit")
    assert submitted["prompt"] == "read the files"
    assert f"[UserPromptSubmit hook output]\n{PROMPT_NOTE}" in hooked["requests"][0]["messages"][1]["content"]


def test_pre_tool_use_blocks_git_push_with_its_reason_and_sees_every_call(hooked):
    assert not (hooked["ws"] / "pushed").exists()  # the call was not run
    refusal = _tool_result(hooked["requests"][-1], "PreToolUse hook")
    assert "blocked this run_command call; it was not run" in refusal and "git push is off limits" in refusal
    seen = [(p["tool_name"], p["tool_input"]) for p in _events(hooked, "PreToolUse")]
    assert seen[0] == (
        "write_file",
        {"path": "a.py", "content": "x = 1   \ny = 2\t\n", "file_path": str(hooked["ws"] / "a.py")},
    )
    assert len(seen) == 3 + READS and all(p["tool_use_id"] for p in _events(hooked, "PreToolUse"))
    assert "PreToolUse hook" in hooked["result"].stderr and "blocked it" in hooked["result"].stderr  # the user sees it


def test_post_tool_use_formatter_rewrites_the_file_and_the_model_reads_its_note(hooked):
    assert (hooked["ws"] / "a.py").read_text() == "x = 1\ny = 2\n"
    result = _tool_result(hooked["requests"][-1], "a.py was reformatted")
    assert "[PostToolUse hook output]\na.py was reformatted" in result
    reads = _events(hooked, "PostToolUse")  # the logger's matcher: read_file only
    assert [p["tool_name"] for p in reads] == ["read_file"] * READS
    assert reads[0]["tool_response"]["ok"] is True and "file 0" in reads[0]["tool_response"]["output"]


def test_stop_hook_sends_the_model_back_once_with_its_reason(hooked):
    stops = _events(hooked, "Stop")  # the logger runs after the blocking hook, each time the model stops
    assert [p["stop_hook_active"] for p in stops] == [False, True]
    assert stops[0]["last_assistant_message"] == "All read."
    last = hooked["requests"][-1]["messages"]
    assert last[-2] == {"role": "assistant", "content": "All read."}
    assert last[-1]["role"] == "user" and "Stop hook did not let you stop yet" in last[-1]["content"]
    assert "run the tests before you stop" in last[-1]["content"]
    assert hooked["result"].stdout == "All read, and the tests pass.\n"


def test_subagent_stop_runs_when_the_helper_answers(hooked):
    [helper] = _events(hooked, "SubagentStop")
    assert helper["last_assistant_message"] == "The note is in f3.txt." and helper["stop_hook_active"] is False
    assert len(_events(hooked, "SessionStart")) == 1 and len(_events(hooked, "UserPromptSubmit")) == 1


def test_the_prompt_prefix_is_byte_stable_across_the_hooked_20_step_session(hooked):
    """Hook output travels next to its event: the system message and the tools never change,
    and every request's messages start with all of the request before it, byte for byte."""
    requests = hooked["requests"]
    assert len(requests) == 22  # 20 tool-call steps, the answer the Stop hook sent back, the last answer
    prefix = json.dumps([requests[0]["messages"][0], requests[0]["tools"]])
    for before, after in itertools.pairwise(requests):
        assert json.dumps([after["messages"][0], after["tools"]]) == prefix
        sent = json.dumps(before["messages"])[:-1]  # without the closing bracket: a prefix of the next
        assert json.dumps(after["messages"]).startswith(sent)


def test_a_user_prompt_submit_hook_exiting_2_blocks_the_prompt(tmp_path):
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    script = "cat > /dev/null; echo 'no secrets in prompts, please' >&2; exit 2"
    (home / "config.toml").write_text(hooks_toml([("UserPromptSubmit", script, None)]))
    server = ScriptedServer().add(text("should not be asked"))
    try:
        result = run_cli(
            ["-p", "my password is hunter2", "--base-url", server.url], workspace, {"NANOHERMES_HOME": str(home)}
        )
    finally:
        server.close()
    assert result.returncode == 1 and server.chat_requests() == []  # the prompt was not sent
    assert "The prompt was not sent: a UserPromptSubmit hook" in result.stderr
    assert "no secrets in prompts, please" in result.stderr


def test_an_untrusted_workspaces_hooks_never_run_and_the_user_is_told(hooked):
    assert not (hooked["root"] / "untrusted-ran").exists()
    assert "defines 3 hook(s)" in hooked["result"].stderr and "--trust-workspace" in hooked["result"].stderr


def test_trust_workspace_runs_a_workspaces_hooks_and_keeps_the_trust(tmp_path):
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    (workspace / ".nanohermes").mkdir(parents=True)
    marker = workspace / "marker"  # a workspace's hook runs in the sandbox: it may write the workspace only
    (workspace / ".nanohermes" / "config.toml").write_text(hooks_toml([("SessionStart", f"touch {marker}", None)]))
    server = ScriptedServer().add(text("one"))
    try:
        trusted = run_cli(
            ["-p", "hi", "--base-url", server.url, "--trust-workspace"], workspace, {"NANOHERMES_HOME": str(home)}
        )
    finally:
        server.close()
    assert trusted.returncode == 0, trusted.stderr
    assert marker.exists() and "not trusted" not in trusted.stderr
    [kept] = (home / "trust").iterdir()  # the next session runs them without the flag, until they change
    assert json.loads(kept.read_text())["workspace"] == str(workspace.resolve())


def _auto_tested(tmp_path):
    """A home whose PostToolUse hook is an auto-test (add must add), and a workspace with calc.py to fix."""
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    check = 'grep -q "a + b" calc.py || { printf "noise\\nFAILED test_add\\n1 failed\\n" >&2; exit 2; }'
    (home / "config.toml").write_text(hooks_toml([("PostToolUse", check, "write_file|edit_file")]))
    return home, workspace


def _one_shot(server, home, workspace, *flags):
    """`-p "Fix add in calc.py."` against `server`, closed afterwards."""
    try:
        args = ["-p", "Fix add in calc.py.", "--base-url", server.url, "--yes", *flags]
        return run_cli(args, workspace, {"NANOHERMES_HOME": str(home)})
    finally:
        server.close()


def test_a_one_shot_run_the_auto_test_keeps_refusing_exits_3_with_the_checks_last_lines(tmp_path):
    """The model writes the same wrong file again when asked for it whole (sampled): the run stops with no
    request for an answer; stdout has the check's last lines, stderr the stop, the JSON the stop reason."""
    home, workspace = _auto_tested(tmp_path)
    wrong = "def add(a, b):\n    return a * b\n"
    server = ScriptedServer().add(call("write_file", {"path": "calc.py", "content": wrong}))
    server.add(text(f"```python\n{wrong}```"), text(f"```python\n{wrong}```"))
    result = _one_shot(server, home, workspace, "--coach", "small", "--output-format", "json")
    assert result.returncode == 3, result.stderr
    assert len(server.chat_requests()) == 3  # the write, the file asked for whole, asked again sampled
    [outcome] = [json.loads(line) for line in result.stdout.splitlines() if '"type": "result"' in line]
    assert outcome["stop_reason"] == "check_failing" and outcome["exit_code"] == 3
    assert outcome["answer"].startswith("[partial answer") and outcome["answer"].endswith(
        "FAILED test_add\n    1 failed"
    )
    assert (workspace / "calc.py").read_text() == wrong


def test_a_one_shot_run_ends_when_the_file_asked_for_whole_passes_the_auto_test(tmp_path):
    home, workspace = _auto_tested(tmp_path)
    server = ScriptedServer().add(call("write_file", {"path": "calc.py", "content": "def add(a, b):\n    return a\n"}))
    server.add(text("```python\ndef add(a, b):\n    return a + b\n```"))
    result = _one_shot(server, home, workspace, "--coach", "small")
    assert result.returncode == 0, result.stderr
    assert (
        len(server.chat_requests()) == 2
        and result.stdout.strip() == "calc.py, written whole as asked, passes the check a PostToolUse hook runs."
    )
