"""Claude Code's hook contract, its pure parts and the files: matcher grammar, the two
vocabularies, updatedInput back to our arguments, answers (continue:false, updatedInput, JSON on
any exit code), settings files read and what their trust covers."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nanohermes.hooks import Hooks
from nanohermes.hooks.claude_settings import CLAUDE_PROMPT_TIMEOUT, CLAUDE_TIMEOUT, parse_claude_hooks
from nanohermes.hooks.outcome import outcome_of
from nanohermes.hooks.payload import arguments_from, parsed_call, tool_input
from nanohermes.hooks.run import HookRun
from nanohermes.hooks.settings import FROM_CLAUDE_PROJECT, FROM_CLAUDE_USER, HookSpec
from nanohermes.hooks.sources import hook_settings
from nanohermes.hooks.vocabulary import matched_name, matches_no_tool, takes
from tests.support.claude_hooks import write_settings
from tests.support.hook_scripts import logged, write_scripts

TOOLS = ["read_file", "grep", "glob", "run_command", "web_fetch", "write_file", "edit_file", "task", "mcp"]


@pytest.mark.parametrize(
    "matcher, name, takes_it",
    [
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),  # letters only: an exact name, not a regex
        ("Edit|Write", "Write", True),
        ("Edit, Write", "Edit", True),  # comma lists, with spaces
        ("Edit.*", "NotebookEdit", True),  # a regex matches anywhere, as RegExp.test does
        ("^Edit$", "NotebookEdit", False),
        ("mcp__memory__.*", "mcp__memory__create_entities", True),
        ("mcp__memory", "mcp__memory__create_entities", False),  # exact: the documented trap
        ("*", "anything", True),
        ("", "anything", True),
    ],
)
def test_claude_codes_matcher_grammar(matcher, name, takes_it):
    assert takes(matcher, name, claude=True) is takes_it


def test_either_vocabulary_matches_and_the_hook_is_told_the_one_its_matcher_used():
    assert matched_name("Bash", "run_command", claude=False) == "Bash"  # config.toml, Claude's name
    assert matched_name("run_command", "run_command", claude=True) == "run_command"  # and the other way
    assert matched_name(None, "run_command", claude=True) == "Bash"  # every tool: the file's vocabulary
    assert matched_name(None, "run_command", claude=False) == "run_command"
    assert matched_name("Edit|Write", "edit_file", claude=True) == "Edit"
    assert matched_name("MultiEdit", "edit_file", claude=True) == "MultiEdit"
    assert matched_name("mcp__github__.*", "mcp:github.search", claude=True) == "mcp__github__search"
    assert matched_name("mcp:github\\..*", "mcp:github.search", claude=False) == "mcp:github.search"
    assert matched_name("Task", "task", claude=True) and matched_name("Agent", "task", claude=True)
    assert matched_name("Bash", "read_file", claude=True) is None
    assert matches_no_tool("Bsh", True, TOOLS) and matches_no_tool("NotebookEdit", True, TOOLS)
    assert not matches_no_tool("Bash|Bsh", True, TOOLS) and not matches_no_tool("mcp__x__.*", True, TOOLS)
    assert matches_no_tool("WebSearch", True, TOOLS)  # not configured in this session


def test_tool_input_carries_both_names_and_updated_input_comes_back_as_our_arguments(tmp_path):
    edit = {"path": "a.py", "old_text": "x", "new_text": "y"}
    sent = tool_input("edit_file", edit, tmp_path, "Edit")
    assert sent == {**edit, "file_path": str(tmp_path / "a.py"), "old_string": "x", "new_string": "y"}
    back = arguments_from("edit_file", {**sent, "new_string": "z"}, sent, "Edit")
    assert back == {"path": "a.py", "old_text": "x", "new_text": "z"}  # the key it changed wins
    assert arguments_from(
        "edit_file", {"file_path": "/w/b.py", "old_string": "x", "new_string": "y"}, sent, "Edit"
    ) == {
        "path": "/w/b.py",
        "old_text": "x",
        "new_text": "y",
    }
    bash = tool_input("run_command", {"command": "ls", "timeout": 5, "background": True}, tmp_path, "Bash")
    assert (bash["timeout"], bash["run_in_background"]) == (5000, True)
    assert arguments_from("run_command", {**bash, "command": "ls -a"}, bash, "Bash") == {
        "command": "ls -a",
        "timeout": 5.0,
        "background": True,
    }
    name, args = parsed_call("mcp", json.dumps({"name": "gh.search", "arguments": {"q": "x"}}))
    assert (name, args) == ("mcp:gh.search", {"q": "x"})
    assert arguments_from(name, {"q": "y"}, args, "mcp__gh__search") == {"name": "gh.search", "arguments": {"q": "y"}}


@given(st.dictionaries(st.sampled_from(["path", "old_text", "new_text", "replace_all"]), st.text(max_size=5)))
def test_an_updated_input_that_changes_nothing_gives_back_the_same_arguments(args):
    sent = tool_input("edit_file", args, __import__("pathlib").Path("/w"), "Edit")
    back = arguments_from("edit_file", dict(sent), sent, "Edit")
    assert back == args


def _said(stdout="", stderr="", code=0, tool=True):
    return outcome_of(HookRun(code=code, stdout=stdout, stderr=stderr), tool_event=tool)


def test_continue_false_updated_input_and_json_on_any_exit_code():
    stop = _said('{"continue": false, "stopReason": "Build failed"}')
    assert stop.stop == "Build failed" and _said('{"continue": false}').stop.startswith("(the hook gave")
    rewrite = _said(json.dumps({"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"a": 1}}}))
    assert (rewrite.decision, rewrite.updated_input) == ("allow", {"a": 1})
    assert _said('{"hookSpecificOutput": {"updatedInput": "rm -rf /"}}').problem.startswith("answered an updatedInput")
    assert _said('{"decision": "block", "reason": "in JSON"}', stderr="on stderr", code=2).reason == "in JSON"
    assert _said('{"systemMessage": "hi"}', stderr="on stderr", code=2).reason == "on stderr"
    assert _said('{"continue": false}', code=2).stop  # exit 2 blocks, and its JSON still stops
    deny = _said('{"hookSpecificOutput": {"permissionDecision": "deny"}}', code=1)  # the JSON decides, not the code
    assert deny.decision == "deny" and not deny.problem
    assert _said("not json", code=1).problem == "failed (exit 1): not json"


def test_a_settings_file_is_read_as_claude_code_reads_it(tmp_path):
    table = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]}],
        "UserPromptSubmit": [{"matcher": "ignored", "hooks": [{"type": "command", "command": "b"}]}],
        "SessionStart": [
            {
                "matcher": "startup",
                "hooks": [{"type": "command", "command": "c", "args": ["${CLAUDE_PROJECT_DIR}/x y"]}],
            }
        ],
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "done?"}, {"type": "command", "command": "d", "timeout": 5}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "e"}]}],
    }
    specs, problems = parse_claude_hooks(table, FROM_CLAUDE_USER, tmp_path)
    by_event = {spec.event: spec for spec in specs}
    assert (by_event["PreToolUse"].matcher, by_event["PreToolUse"].timeout) == ("Bash", CLAUDE_TIMEOUT)
    assert (by_event["UserPromptSubmit"].matcher, by_event["UserPromptSubmit"].timeout) == (None, CLAUDE_PROMPT_TIMEOUT)
    assert by_event["SessionStart"].command == f"c '{tmp_path}/x y'"  # exec form: each arg one word
    assert by_event["Stop"].timeout == 5 and "SessionEnd" not in by_event
    assert problems == [
        "NanoHermes has no SessionEnd event, so those hooks never run",
        "Stop[0].hooks[0]: type 'prompt' is not run (NanoHermes runs command hooks)",
    ]
    for bad, says in [
        ([], '"hooks" is not an object of events'),
        ({"Stop": {"hooks": []}}, "Stop is not a list of matcher groups"),
        ({"PreToolUse": [{"matcher": "(", "hooks": []}]}, "is not a regex"),
        ({"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "5"}]}]}, "timeout a number"),
        ({"Stop": [{"hooks": [{"type": "command", "command": "x", "shell": "powershell"}]}]}, "bash only"),
    ]:
        assert says in "; ".join(parse_claude_hooks(bad, FROM_CLAUDE_USER, tmp_path)[1])


def test_a_session_start_matcher_takes_the_source_and_plain_stdout_reaches_the_model_as_in_claude_code(tmp_path):
    scripts, log = write_scripts(tmp_path / "s"), tmp_path / "log"
    logger = f"{scripts['logger.py']} {log}"
    specs = (
        HookSpec("SessionStart", f"{logger} 'fresh start'", "startup", source=FROM_CLAUDE_USER),
        HookSpec("SessionStart", f"{logger} 'resumed'", "resume", source=FROM_CLAUDE_USER),
        HookSpec("PostToolUse", f"{logger} 'plain chatter'", "Read", source=FROM_CLAUDE_USER, sandbox=False),
        HookSpec("PostToolUse", f"{logger} 'our own hook says'", "read_file", sandbox=False),
    )
    hooks = Hooks(specs, tmp_path, ("s1", str(tmp_path / "s1.jsonl")), mode=lambda: "accept-edits")
    hooks.session_start("startup")
    assert hooks.pending == ["[SessionStart hook output]\nfresh start"]
    after = hooks.after_tool("read_file", '{"path": "a"}', "c1", "1\tx", True, {})
    assert after.added == "\n\n[PostToolUse hook output]\nour own hook says"  # Claude's plain stdout: the debug log
    assert [p["tool_name"] for p in logged(log)[1:]] == ["Read", "read_file"]
    assert {p["permission_mode"] for p in logged(log)} == {"acceptEdits"}


def test_the_workspaces_trust_covers_its_claude_files_and_the_scripts_they_name(tmp_path):
    workspace, claude_dir = tmp_path / "ws", tmp_path / "claude-home"
    script = workspace / ".claude" / "hooks" / "check.sh"
    script.parent.mkdir(parents=True)
    script.write_text("exit 0\n")
    entry = {
        "matcher": "Edit|Write",
        "hooks": [{"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh'}],
    }
    write_settings(workspace / ".claude" / "settings.json", {"PreToolUse": [entry]})
    write_settings(workspace / ".claude" / "settings.local.json", {"PreToolUse": [entry]})  # the same handler
    write_settings(claude_dir / "settings.json", {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]})
    first = hook_settings(None, {}, workspace, claude_dir)
    assert [s.source for s in first.user] == [FROM_CLAUDE_USER] and [s.source for s in first.project] == [
        FROM_CLAUDE_PROJECT
    ]  # the same handler in two files runs once
    assert first.project_files == (".claude/settings.json", ".claude/settings.local.json")
    script.write_text("exit 0  # changed\n")
    second = hook_settings(None, {}, workspace, claude_dir)
    assert second.project_digest != first.project_digest
    write_settings(workspace / ".claude" / "settings.local.json", {})
    assert hook_settings(None, {}, workspace, claude_dir).project_digest != second.project_digest


def test_a_stop_hooks_json_context_sends_the_model_on_and_continue_false_lets_it_stop(tmp_path):
    context = json.dumps({"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "run the tests"}})
    go_on = HookSpec("Stop", f"cat > /dev/null; echo '{context}'", source=FROM_CLAUDE_USER)
    said = Hooks((go_on,), tmp_path).at_stop("Done.", active=False)
    assert said is not None and "run the tests" in said
    plain = HookSpec("Stop", "cat > /dev/null; echo 'just chatter'", source=FROM_CLAUDE_USER)
    assert Hooks((plain,), tmp_path).at_stop("Done.", active=False) is None  # plain stdout decides nothing
    stop = HookSpec("Stop", """cat > /dev/null; echo '{"continue": false, "stopReason": "enough"}'""")
    block = HookSpec("Stop", "cat > /dev/null; echo 'not yet' >&2; exit 2")
    notices = []
    assert Hooks((block, stop), tmp_path, emit=notices.append).at_stop("Done.", active=False) is None
    assert any("asked to stop: enough" in n.text for n in notices)


def test_a_subagent_stop_matcher_takes_the_helpers_agent_type(tmp_path):
    said = """cat > /dev/null; echo '{"decision": "block", "reason": "cite the file"}'"""
    specs = (
        HookSpec("SubagentStop", said, "general-purpose", source=FROM_CLAUDE_USER),
        HookSpec("SubagentStop", "cat > /dev/null; echo 'never' >&2; exit 2", "Explore", source=FROM_CLAUDE_USER),
    )
    helper = Hooks(specs, tmp_path).for_helper(lambda event: None)
    assert (
        helper.at_stop("Found it.", active=False)
        == "[A SubagentStop hook did not let you stop yet. Its reason: cite the file]"
    )
