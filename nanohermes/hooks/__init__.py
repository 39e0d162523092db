"""Hooks: the user's commands, run on the session's events, answering as Claude Code's do.

Events: SessionStart (start, resume, /reset), UserPromptSubmit, PreToolUse, PostToolUse,
PostToolUseFailure, PreCompact, PostCompact, Stop and, for a helper agent, SubagentStop. Each
matching hook gets one JSON object on stdin (session_id, transcript_path, cwd, permission_mode,
hook_event_name, and the event's own: prompt, tool_name, tool_input, tool_use_id, tool_response,
trigger, summary, …), the tool named and its input shaped in the vocabulary its matcher used,
NanoHermes's or Claude Code's (hooks/vocabulary.py, hooks/payload.py), and answers by exit code
or JSON (hooks/outcome.py); `continue: false` ends the turn, `updatedInput` rewrites the call.
What reaches the model travels next to the event, never in the system prompt (the prompt prefix
stays byte-identical): SessionStart's and UserPromptSubmit's as an attachment of the user's
next message, PostToolUse's appended to the tool result, PostCompact's as a tagged user-role
message after the compaction (synthetic.py), a Stop hook's reason to go on as a nudge
(loop/nudges.py). A PreToolUse decision goes to loop/approvals.py, which never lets it widen
past a deny rule, an ask rule or the sandbox; nor does a rewritten call, judged as rewritten.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from nanohermes import events as ev
from nanohermes.errors import PromptBlocked
from nanohermes.hooks.outcome import ALLOW, ASK, DENY, Outcome, for_user, outcome_of
from nanohermes.hooks.payload import PERMISSION_MODES, arguments_from, parsed_call, tool_input, tool_response
from nanohermes.hooks.run import run_hook
from nanohermes.hooks.settings import HookSpec
from nanohermes.sandbox.actors import REPOSITORY, USER, command_policy
from nanohermes.sandbox.policy import Policy

HELPER_SKIPS = frozenset({"SessionStart", "UserPromptSubmit", "Stop"})  # a helper's prompt is the model's
PROMPT_BLOCKED = "The prompt was not sent: a UserPromptSubmit hook ({command}) blocked it. Its reason: {reason}"
PROMPT_STOPPED = (
    "The prompt was not sent: a UserPromptSubmit hook ({command}) stopped the session. Its reason: {reason}"
)
STOP_BLOCKED = "[A {event} hook did not let you stop yet. Its reason: {reason}]"
PROJECT_DIR_VARS = ("NANOHERMES_PROJECT_DIR", "CLAUDE_PROJECT_DIR")  # the workspace, as Claude Code's scripts read it
COMMAND_CHARS = 80  # a hook's command as notices and refusals name it
UNDECIDED = (
    "the PreToolUse hook ({command}) {problem}, so the call was blocked: a guard that cannot answer "
    "in time must not let a call through. Fix or speed up the hook, or raise its timeout."
)
# Claude Code adds a hook's plain-text stdout to the context on these events only; a hook from its
# settings files keeps that (NanoHermes's own hooks reach the model with plain text on every event).
PLAIN_TEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})
STOPS_THE_TURN = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})  # `continue: false` ends the turn
HELPER_AGENT_TYPE = "general-purpose"  # what a SubagentStop matcher takes: a `task` helper, in Claude Code's words


@dataclass(frozen=True)
class AfterTool:
    """What the PostToolUse hooks made of one finished call."""

    added: str = ""  # what joins the result ("" for nothing)
    ran: bool = False  # a hook ran to its end (it did not fail to start, time out or flood)
    blocked: bool = False  # one blocked: the change failed the user's check, its reason is in `added`
    stop: HookStop | None = None  # one answered `continue: false`: the turn ends after this call


@dataclass(frozen=True)
class HookStop:
    """A hook's `continue: false`: the turn ends, and the user reads why (its stopReason)."""

    event: str
    command: str  # the hook, shortened
    reason: str


@dataclass(frozen=True)
class ToolVerdict:
    """A PreToolUse hook's say on one call (loop/approvals.py combines it with the rules)."""

    effect: str | None  # allow | deny | ask (None: no hook decided)
    reason: str
    command: str  # the hook that said it, shortened
    arguments: str | None = None  # updatedInput: the call's arguments as a hook rewrote them (JSON)
    stop: HookStop | None = None  # `continue: false`: the call is not run and the turn ends


class Ran(NamedTuple):
    """One hook that ran: its spec, what it said, and the tool input it was sent (tool events)."""

    spec: HookSpec
    outcome: Outcome
    told: str | None = None  # the tool's name as it was told (its matcher's vocabulary)
    sent: dict | None = None


class Hooks:
    """The session's hooks (those that may run: the user's, and the workspace's once trusted)."""

    def __init__(
        self,
        specs: tuple[HookSpec, ...] = (),
        workspace: Path | None = None,
        session: tuple[str, str] = ("", ""),
        emit: Callable[[object], None] = lambda event: None,
        redact: Callable[[str], str] = lambda text: text,
        stop_event: str = "Stop",
        sandbox: Policy | None = None,
        mode: Callable[[], str] = lambda: "ask",
    ):
        """`session`: its name and file (session_id, transcript_path); `redact`: what reaches the
        model is taken through it (a hook may print a secret); `stop_event`: Stop, or SubagentStop;
        `sandbox`: the session's policy, which a confined hook runs under (sandbox/actors.py);
        `mode`: the session's permission mode now (sent as Claude Code's permission_mode)."""
        self.specs, self.workspace, self.session = tuple(specs), workspace or Path.cwd(), session
        self.emit, self.redact, self.stop_event, self.sandbox, self.mode = emit, redact, stop_event, sandbox, mode
        self.pending: list[str] = []  # SessionStart's output, sent with the next user message
        self.project_env = {name: str(self.workspace) for name in PROJECT_DIR_VARS}

    def for_helper(
        self, emit: Callable[[object], None], workspace: Path | None = None, sandbox: Policy | None = None
    ) -> Hooks:
        """A helper agent's: its answer is SubagentStop; no SessionStart, UserPromptSubmit or Stop. A helper
        in a worktree of its own gives its `workspace` (where the hooks run) and `sandbox` (what confines them)."""
        specs = tuple(s for s in self.specs if s.event not in HELPER_SKIPS)
        where, confined = (workspace, sandbox) if workspace is not None else (self.workspace, self.sandbox)
        return Hooks(specs, where, self.session, emit, self.redact, "SubagentStop", confined, self.mode)

    def session_start(self, source: str) -> None:
        """startup, resume or clear: what the hooks print joins the next user message."""
        ran = self._run("SessionStart", source, source=source)
        self.pending += [_attachment("SessionStart", r.outcome.context) for r in ran]

    def before_request(self, prompt: str, context: str = "") -> str:
        """The user's `context` with what SessionStart and UserPromptSubmit hooks add; PromptBlocked
        when one blocks (exit 2) or stops (`continue: false`): the prompt is not sent, and the user reads why."""
        ran = self._run("UserPromptSubmit", prompt=prompt)
        for spec, outcome, *_ in ran:
            if outcome.stop is not None or outcome.blocked:
                words = PROMPT_STOPPED if outcome.stop is not None else PROMPT_BLOCKED
                raise PromptBlocked(words.format(command=_short(spec.command), reason=outcome.stop or outcome.reason))
        added = [_attachment("UserPromptSubmit", r.outcome.context) for r in ran]
        parts, self.pending = [context, *self.pending, *added], []
        return "\n\n".join(part for part in parts if part)

    def before_tool(self, name: str, arguments: str, call_id: str) -> ToolVerdict | None:
        """What PreToolUse hooks say of a call: a stop over deny over ask over allow; a workspace
        hook's allow counts for nothing (a repository cannot grant itself anything); the first
        updatedInput rewrites the call, which the approvals then judge as rewritten."""
        if not self.wants("PreToolUse"):
            return None
        tool = parsed_call(name, arguments)
        ran = self._run("PreToolUse", tool[0], tool=tool, tool_use_id=call_id)
        for spec, outcome, *_ in ran:  # a guard that could not answer must not let the call through
            if outcome.stop is not None:
                return ToolVerdict(DENY, outcome.stop, _short(spec.command), stop=_stop("PreToolUse", spec, outcome))
            if outcome.undecided:
                reason = UNDECIDED.format(command=_short(spec.command), problem=outcome.problem)
                return ToolVerdict(DENY, reason, _short(spec.command))
        rewritten = self._rewritten(tool, ran)
        for effect in (DENY, ASK, ALLOW):
            for spec, outcome, *_ in ran:
                if outcome.decision == effect and (effect != ALLOW or spec.from_user):
                    return ToolVerdict(effect, self.redact(outcome.reason), _short(spec.command), rewritten)
        return ToolVerdict(None, "", "", rewritten) if rewritten is not None else None

    def _rewritten(self, tool: tuple[str, dict], ran: list[Ran]) -> str | None:
        """The call's arguments as the first hook that answered updatedInput (and did not deny) rewrote them."""
        for spec, outcome, told, sent in ran:
            if outcome.updated_input is not None and not outcome.blocked:
                arguments = json.dumps(arguments_from(tool[0], outcome.updated_input, sent or {}, told or ""))
                self.emit(
                    ev.Notice(f"PreToolUse hook ({_short(spec.command)}) changed the call: {for_user(arguments)}")
                )
                return arguments
        return None

    def after_tool(
        self, name: str, arguments: str, call_id: str, output: str, ok: bool, facts: dict, streams=None
    ) -> AfterTool:
        """What PostToolUse hooks add to the result: their note, or a block's reason (exit 2 or
        decision "block": as a Claude Code user's auto-test says the change failed its check). A call
        that failed (an error, a command exiting non-zero) runs PostToolUseFailure, and a Claude Code
        settings file's PostToolUse only after one that did not, as there. `streams`: a command's
        stdout and stderr apart."""
        if not (self.wants("PostToolUse") or self.wants("PostToolUseFailure")):
            return AfterTool()
        tool = parsed_call(name, arguments)
        failed = not ok or facts.get("exit_code") not in (None, 0) or bool(facts.get("timed_out"))
        response = tool_response(tool[0], output, ok, facts, streams)
        ran = self._run("PostToolUse", tool[0], tool=tool, tool_use_id=call_id, tool_response=response, failed=failed)
        if failed:
            error = {"error": output, "is_interrupt": bool(facts.get("interrupted"))}
            ran += self._run("PostToolUseFailure", tool[0], tool=tool, tool_use_id=call_id, **error)
        notes = [_attachment(r.spec.event, r.outcome.reason if r.outcome.blocked else r.outcome.context) for r in ran]
        checked = any(not r.outcome.problem for r in ran if r.spec.event == "PostToolUse")
        blocked = any(r.outcome.blocked for r in ran if r.spec.event == "PostToolUse")
        stop = next((_stop(r.spec.event, r.spec, r.outcome) for r in ran if r.outcome.stop is not None), None)
        return AfterTool("".join(f"\n\n{note}" for note in notes if note), checked, blocked, stop)

    def compacting(self, trigger: str, focus: str | None) -> None:
        """PreCompact: before the summary request (it cannot stop a compaction the window needs)."""
        self._run("PreCompact", trigger, trigger=trigger, custom_instructions=focus or "")

    def compacted(self, trigger: str, summary: str) -> str:
        """PostCompact: what its hooks print, for the model ("" for nothing)."""
        ran = self._run("PostCompact", trigger, trigger=trigger, summary=summary, compact_summary=summary)
        return "\n\n".join(note for r in ran if (note := _attachment("PostCompact", r.outcome.context)))

    def at_stop(self, last_message: str, active: bool) -> str | None:
        """Stop (or SubagentStop): the text sending the model back to work when a hook blocks its
        stop (or answers additionalContext in JSON, as Claude Code's may), else None. A hook's
        `continue: false` lets it stop whatever the others said. `active`: the model is already
        going on because of a Stop hook."""
        fields = {"stop_hook_active": active, "last_assistant_message": last_message}
        if self.stop_event == "SubagentStop":  # its matcher takes the agent's type
            fields["agent_type"] = HELPER_AGENT_TYPE
        ran = self._run(self.stop_event, fields.get("agent_type"), **fields)
        if any(r.outcome.stop is not None for r in ran):
            return None
        reasons = [r.outcome.reason for r in ran if r.outcome.blocked]
        reasons += [r.outcome.context for r in ran if r.outcome.json and r.outcome.context and not r.outcome.blocked]
        return STOP_BLOCKED.format(event=self.stop_event, reason="\n\n".join(reasons)) if reasons else None

    def wants(self, event: str) -> bool:
        return any(spec.event == event for spec in self.specs)

    def _run(self, event: str, value: str | None = None, tool=None, failed: bool = False, **fields) -> list[Ran]:
        """Every hook of `event` whose matcher takes `value` (a tool's name, a source, a trigger), in
        the order configured, each sent `tool` ((name, arguments)) as its vocabulary names it; what
        each said for the model redacted, its errors, blocks and messages told the user. `failed`: a
        failed call, which a Claude Code settings file's PostToolUse hook does not see."""
        name, path = self.session
        common = {"session_id": name, "transcript_path": path, "cwd": str(self.workspace), "hook_event_name": event}
        common["permission_mode"] = PERMISSION_MODES.get(self.mode(), PERMISSION_MODES["ask"])
        ran = []
        for spec in self.specs:
            if spec.event != event or (failed and spec.claude):
                continue
            told = spec.told(value)
            if value is not None and told is None:
                continue
            sent = tool_input(tool[0], tool[1], self.workspace, told or "") if tool is not None else None
            named = {"tool_name": told, "tool_input": sent} if tool is not None else {}
            # Redacted as the model's copy is (a hook reads no secret the model would not), before a secret's
            # non-ASCII letters could hide as \u escapes; UTF-8 with a lone surrogate escaped: any text travels.
            text = self.redact(json.dumps({**common, **named, **fields}, default=str, ensure_ascii=False))
            payload = text.encode("utf-8", errors="backslashreplace")
            policy = command_policy(USER if spec.from_user else REPOSITORY, self.sandbox, sandbox=spec.sandboxed)
            run = run_hook(spec.command, payload, self.workspace, spec.timeout, self.project_env, policy)
            outcome = outcome_of(run, tool_event=event == "PreToolUse")
            heard = not spec.claude or outcome.json or event in PLAIN_TEXT_EVENTS  # Claude Code's plain stdout
            context = self.redact(outcome.context) if heard else ""
            outcome = replace(outcome, reason=self.redact(outcome.reason), context=context)
            self._tell(event, spec, outcome)
            ran.append(Ran(spec, outcome, told, sent))
        return ran

    def _tell(self, event: str, spec: HookSpec, outcome: Outcome) -> None:
        who = f"{event} hook ({_short(spec.command)})"
        if outcome.problem:
            self.emit(ev.Notice(f"{who} {outcome.problem}", "warning"))
        if outcome.blocked and outcome.stop is None and event != "UserPromptSubmit":  # said as the turn's error
            self.emit(ev.Notice(f"{who} blocked it: {for_user(outcome.reason)}", "warning"))
        if outcome.stop is not None and event not in STOPS_THE_TURN | {"UserPromptSubmit"}:
            self.emit(ev.Notice(f"{who} asked to stop: {outcome.stop}", "warning"))
        if outcome.message:
            self.emit(ev.Notice(f"{who}: {outcome.message}"))


def _stop(event: str, spec: HookSpec, outcome: Outcome) -> HookStop:
    return HookStop(event, _short(spec.command), outcome.stop or "")


def _attachment(event: str, text: str) -> str:
    """A hook's words as they travel to the model: headed, like every attachment (text.own_words)."""
    return f"[{event} hook output]\n{text}" if text else ""


def _short(command: str) -> str:
    command = " ".join(command.split())
    return for_user(command if len(command) <= COMMAND_CHARS else command[: COMMAND_CHARS - 1] + "…")
