"""Hooks in the real loop (an Agent over the scripted server), with real hook scripts: the
compaction events, PreToolUse's say beside the rules, a hook that hangs or floods."""

from __future__ import annotations

import sys
import time

from nanohermes import events as ev
from nanohermes.hooks import Hooks
from nanohermes.hooks.settings import FROM_PROJECT, HookSpec
from nanohermes.loop.approvals import Approvals
from nanohermes.permissions.rules import parse_rule
from nanohermes.storage.session import Session
from nanohermes.synthetic import synthetic_kind
from tests.support.agents import danger, make_agent
from tests.support.hook_scripts import AFTER_COMPACT, logged, write_scripts
from tests.support.scripted_server import call, is_summary_request, text
from tests.support.timing import HANG_GUARD_S, NEVER_S


def _hooks(workspace, *specs, events=None):
    sink = events if events is not None else []
    return Hooks(specs, workspace, ("s1", "/tmp/s1.jsonl"), sink.append)


def _compacted_agent(server, workspace, hooks):
    server.add(*[call("echo", {"text": str(i)}) for i in range(7)], text("done"))
    agent = make_agent(server, workspace, hooks=hooks)
    agent.run_turn("go")
    server.add(text("Goal: echo numbers. Done: 0-6."))
    agent.fit_context(force=True, focus="the numbers")
    return agent


def test_pre_compact_runs_before_the_summary_request_with_its_trigger(server, workspace, tmp_path):
    scripts, log = write_scripts(tmp_path / "s"), tmp_path / "log"
    hooks = _hooks(workspace, HookSpec("PreCompact", f"{scripts['logger.py']} {log}"))
    _compacted_agent(server, workspace, hooks)
    [payload] = logged(log)
    assert (payload["trigger"], payload["custom_instructions"], payload["hook_event_name"]) == (
        "manual",
        "the numbers",
        "PreCompact",
    )
    assert is_summary_request(server.chat_requests()[-1])  # the hook ran, then the summary was asked for


def test_post_compact_note_follows_the_compaction_and_reaches_the_model(server, workspace, tmp_path):
    (workspace / ".nanohermes").mkdir()
    (workspace / ".nanohermes" / "after-compact.md").write_text("Re-read NOTES.md before the next edit.\n")
    scripts, log = write_scripts(tmp_path / "s"), tmp_path / "log"
    hooks = _hooks(
        workspace, HookSpec("PostCompact", AFTER_COMPACT), HookSpec("PostCompact", f"{scripts['logger.py']} {log}")
    )
    agent = _compacted_agent(server, workspace, hooks)
    note = agent.messages[-1]
    assert synthetic_kind(note) == "hook_post_compact" and note["role"] == "user"
    assert note["content"] == "[PostCompact hook output]\nRe-read NOTES.md before the next edit."
    assert logged(log)[0]["summary"].startswith("Goal: echo numbers")
    server.add(text("ok"))
    agent.run_turn("next")
    sent = server.chat_requests()[-1]["messages"]
    assert any("Re-read NOTES.md" in (m.get("content") or "") for m in sent)
    assert all("nanohermes_synthetic" not in m for m in sent)  # the tag never travels
    agent.session.close()  # the session keeps the note, tagged, for a resume
    resumed = Session(agent.config.home, agent.session.name)
    notes = [m for m in resumed.state.messages if synthetic_kind(m) == "hook_post_compact"]
    resumed.close()
    assert [m["content"] for m in notes] == [note["content"]]


def _refusal(hook_effect, mode="ask", rules=(), approver=None, from_user=True, tmp_path=None, workspace=None):
    """What Approvals says of a `danger` call after a real PreToolUse hook answered `hook_effect`."""
    reason = f"the hook says {hook_effect}"
    answer = (
        f'{{"hookSpecificOutput": {{"permissionDecision": "{hook_effect}", "permissionDecisionReason": "{reason}"}}}}'
    )
    spec = HookSpec(
        "PreToolUse", f"cat > /dev/null; echo '{answer}'", source="config.toml" if from_user else FROM_PROJECT
    )
    verdict = _hooks(workspace, spec).before_tool("danger", '{"path": "x"}', "call_1")
    from nanohermes.tools import ToolContext

    approvals = Approvals(mode, approver, "", tuple(parse_rule(r, e, "config.toml") for e, r in rules))
    return approvals.refusal(danger, '{"path": "x"}', ToolContext(workspace=workspace, home=tmp_path), verdict)


def test_pre_tool_use_decisions_combine_with_rules_and_modes(workspace, tmp_path):
    asked = []

    def yes(tool, args, preview):
        asked.append(preview)
        return "yes"

    kw = dict(tmp_path=tmp_path, workspace=workspace)
    assert "the hook says deny" in _refusal("deny", mode="auto", **kw)  # deny refuses in every mode
    assert "only an interactive session" in _refusal("ask", mode="auto", **kw)  # ask asks even in auto; -p cannot
    assert _refusal("ask", mode="auto", approver=yes, rules=[("allow", "danger")], **kw) is None
    assert asked and "the hook says ask" in asked[0]  # past an allow rule, with the hook's reason
    assert _refusal("allow", **kw) is None  # the user's own hook skips the mode's question
    assert "cannot ask" in _refusal("allow", from_user=False, **kw)  # a repository's allow is nothing
    assert "deny rule" in _refusal("allow", rules=[("deny", "danger")], **kw)  # never past a deny rule
    assert "ask rule" in _refusal("allow", rules=[("ask", "danger")], **kw).lower()  # nor an ask rule


def test_a_hanging_pre_tool_use_hook_is_stopped_and_the_call_is_blocked(server, workspace):
    events = []
    hooks = _hooks(workspace, HookSpec("PreToolUse", f"sleep {NEVER_S:g}", timeout=0.3), events=events)
    server.add(call("echo", {"text": "hi"}), text("done"))
    started = time.monotonic()
    result = make_agent(server, workspace, hooks=hooks).run_turn("go")
    assert time.monotonic() - started < HANG_GUARD_S and result.final_text == "done"  # not its sleep
    refusal = server.chat_requests()[-1]["messages"][-1]["content"]  # a guard that decides nothing fails closed
    assert refusal.startswith("refused: a PreToolUse hook blocked this echo call") and "echo: hi" not in refusal
    assert "timed out" in refusal and "must not let a call through" in refusal
    assert any(isinstance(e, ev.Notice) and "timed out" in e.text for e in events)


def test_a_pre_tool_use_hook_that_exits_1_decides_nothing_and_the_call_goes_on(server, workspace):
    hooks = _hooks(workspace, HookSpec("PreToolUse", "exit 1"))
    server.add(call("echo", {"text": "hi"}), text("done"))
    make_agent(server, workspace, hooks=hooks).run_turn("go")
    assert "echo: hi" in server.chat_requests()[-1]["messages"][-1]["content"]  # Claude Code's non-blocking error


def test_a_flooding_post_tool_use_hook_is_stopped_and_the_model_gets_a_capped_note(server, workspace):
    events = []
    flood = f"{sys.executable} -c \"import sys; sys.stdout.write('y' * 50_000)\""  # exit 0: all of it is context
    hooks = _hooks(workspace, HookSpec("PostToolUse", "yes"), HookSpec("PostToolUse", flood), events=events)
    server.add(call("echo", {"text": "hi"}), text("done"))
    make_agent(server, workspace, hooks=hooks).run_turn("go")
    result = server.chat_requests()[-1]["messages"][-1]["content"]
    assert result.startswith("echo: hi") and len(result) < 5_000
    assert "[… hook output cut: 46,000 more chars not shown]" in result
    assert any(isinstance(e, ev.Notice) and "output cap" in e.text for e in events)  # `yes` was stopped
