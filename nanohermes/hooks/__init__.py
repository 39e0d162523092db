"""Hooks: the user's commands, run on the session's events, answering as Claude Code's do.

Events: SessionStart (start, resume, /reset), UserPromptSubmit, PreToolUse, PostToolUse,
PreCompact, PostCompact, Stop and, for a helper agent, SubagentStop. Each matching hook gets one
JSON object on stdin (session_id, transcript_path, cwd, hook_event_name, and the event's own:
prompt, tool_name, tool_input, tool_use_id, tool_response, trigger, summary, …) and answers by
exit code (hooks/outcome.py). What reaches the model travels next to the event, never in the
system prompt (the prompt prefix stays byte-identical): SessionStart's and UserPromptSubmit's
as an attachment of the user's next message, PostToolUse's appended to the tool result,
PostCompact's as a tagged user-role message after the compaction (synthetic.py), a Stop hook's
reason to go on as a nudge (loop/nudges.py). A PreToolUse decision goes to loop/approvals.py,
which never lets it widen past a deny rule, an ask rule or the sandbox.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from nanohermes import events as ev
from nanohermes.errors import PromptBlocked
from nanohermes.hooks.outcome import ALLOW, ASK, DENY, Outcome, for_user, outcome_of
from nanohermes.hooks.run import run_hook
from nanohermes.hooks.settings import HookSpec
from nanohermes.sandbox.actors import REPOSITORY, USER, command_policy
from nanohermes.sandbox.policy import Policy

HELPER_SKIPS = frozenset({"SessionStart", "UserPromptSubmit", "Stop"})  # a helper's prompt is the model's
PROMPT_BLOCKED = "The prompt was not sent: a UserPromptSubmit hook ({command}) blocked it. Its reason: {reason}"
STOP_BLOCKED = "[A {event} hook did not let you stop yet. Its reason: {reason}]"
PROJECT_DIR_VARS = ("NANOHERMES_PROJECT_DIR", "CLAUDE_PROJECT_DIR")  # the workspace, as Claude Code's scripts read it
COMMAND_CHARS = 80  # a hook's command as notices and refusals name it
UNDECIDED = (
    "the PreToolUse hook ({command}) {problem}, so the call was blocked: a guard that cannot answer "
    "in time must not let a call through. Fix or speed up the hook, or raise its timeout."
)


@dataclass(frozen=True)
class AfterTool:
    """What the PostToolUse hooks made of one finished call."""

    added: str = ""  # what joins the result ("" for nothing)
    ran: bool = False  # a hook ran to its end (it did not fail to start, time out or flood)
    blocked: bool = False  # one blocked: the change failed the user's check, its reason is in `added`


@dataclass(frozen=True)
class ToolVerdict:
    """A PreToolUse hook's say on one call (loop/approvals.py combines it with the rules)."""

    effect: str  # allow | deny | ask
    reason: str
    command: str  # the hook that said it, shortened


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
    ):
        """`session`: its name and file (session_id, transcript_path); `redact`: what reaches the
        model is taken through it (a hook may print a secret); `stop_event`: Stop, or SubagentStop;
        `sandbox`: the session's policy, which a confined hook runs under (sandbox/actors.py)."""
        self.specs, self.workspace, self.session = tuple(specs), workspace or Path.cwd(), session
        self.emit, self.redact, self.stop_event, self.sandbox = emit, redact, stop_event, sandbox
        self.pending: list[str] = []  # SessionStart's output, sent with the next user message
        self.project_env = {name: str(self.workspace) for name in PROJECT_DIR_VARS}

    def for_helper(self, emit: Callable[[object], None]) -> Hooks:
        """A helper agent's: its answer is SubagentStop; no SessionStart, UserPromptSubmit or Stop."""
        specs = tuple(s for s in self.specs if s.event not in HELPER_SKIPS)
        return Hooks(specs, self.workspace, self.session, emit, self.redact, "SubagentStop", self.sandbox)

    def session_start(self, source: str) -> None:
        """startup, resume or clear: what the hooks print joins the next user message."""
        self.pending += [_attachment("SessionStart", o.context) for _, o in self._run("SessionStart", source=source)]

    def before_request(self, prompt: str, context: str = "") -> str:
        """The user's `context` with what SessionStart and UserPromptSubmit hooks add; PromptBlocked
        when one blocks (exit 2): the prompt is not sent, and the user reads why."""
        ran = self._run("UserPromptSubmit", prompt=prompt)
        for spec, outcome in ran:
            if outcome.blocked:
                raise PromptBlocked(PROMPT_BLOCKED.format(command=_short(spec.command), reason=outcome.reason))
        added = [_attachment("UserPromptSubmit", o.context) for _, o in ran]
        parts, self.pending = [context, *self.pending, *added], []
        return "\n\n".join(part for part in parts if part)

    def before_tool(self, name: str, arguments: str, call_id: str) -> ToolVerdict | None:
        """What PreToolUse hooks say of a call: deny over ask over allow; a workspace hook's allow
        counts for nothing (a repository cannot grant itself anything)."""
        if not self.wants("PreToolUse"):
            return None
        tool_name, tool_input = self.tool_as_hooks_see_it(name, arguments)
        ran = self._run("PreToolUse", tool_name, tool_name=tool_name, tool_input=tool_input, tool_use_id=call_id)
        for spec, outcome in ran:  # a guard that could not answer must not let the call through
            if outcome.undecided:
                reason = UNDECIDED.format(command=_short(spec.command), problem=outcome.problem)
                return ToolVerdict(DENY, reason, _short(spec.command))
        for effect in (DENY, ASK, ALLOW):
            for spec, outcome in ran:
                if outcome.decision == effect and (effect != ALLOW or spec.from_user):
                    return ToolVerdict(effect, self.redact(outcome.reason), _short(spec.command))
        return None

    def after_tool(self, name: str, arguments: str, call_id: str, output: str, ok: bool, facts: dict) -> AfterTool:
        """What PostToolUse hooks add to the result: their note, or a block's reason (exit 2 or
        decision "block": as a Claude Code user's auto-test says the change failed its check)."""
        if not self.wants("PostToolUse"):
            return AfterTool()
        tool_name, tool_input = self.tool_as_hooks_see_it(name, arguments)
        call = {"tool_name": tool_name, "tool_input": tool_input, "tool_use_id": call_id}
        ran = self._run("PostToolUse", tool_name, **call, tool_response={"output": output, "ok": ok, **facts})
        notes = [_attachment("PostToolUse", o.reason if o.blocked else o.context) for _, o in ran]
        checked = any(not o.problem for _, o in ran)
        return AfterTool("".join(f"\n\n{note}" for note in notes if note), checked, any(o.blocked for _, o in ran))

    def compacting(self, trigger: str, focus: str | None) -> None:
        """PreCompact: before the summary request (it cannot stop a compaction the window needs)."""
        self._run("PreCompact", trigger=trigger, custom_instructions=focus or "")

    def compacted(self, trigger: str, summary: str) -> str:
        """PostCompact: what its hooks print, for the model ("" for nothing)."""
        ran = self._run("PostCompact", trigger=trigger, summary=summary)
        return "\n\n".join(note for _, o in ran if (note := _attachment("PostCompact", o.context)))

    def at_stop(self, last_message: str, active: bool) -> str | None:
        """Stop (or SubagentStop): the text sending the model back to work when a hook blocks its
        stop, else None. `active`: the model is already going on because of a Stop hook."""
        ran = self._run(self.stop_event, stop_hook_active=active, last_assistant_message=last_message)
        reasons = [outcome.reason for _, outcome in ran if outcome.blocked]
        return STOP_BLOCKED.format(event=self.stop_event, reason=reasons[0]) if reasons else None

    def tool_as_hooks_see_it(self, name: str, arguments: str) -> tuple[str, dict]:
        """(tool_name, tool_input): an MCP call as `mcp:server.tool` with that tool's arguments; a
        file tool's path also as an absolute `file_path`, as Claude Code's hooks read it."""
        try:
            args = json.loads(arguments or "{}")
        except ValueError:
            args = None
        if not isinstance(args, dict):
            return name, {"arguments": arguments}
        if name == "mcp" and "." in str(args.get("name", "")):
            inner = args.get("arguments")
            return f"mcp:{args['name']}", inner if isinstance(inner, dict) else {}
        if isinstance(args.get("path"), str) and "file_path" not in args:
            args = {**args, "file_path": os.path.normpath(self.workspace / os.path.expanduser(args["path"]))}
        return name, args

    def wants(self, event: str) -> bool:
        return any(spec.event == event for spec in self.specs)

    def _run(self, event: str, matched: str | None = None, **fields) -> list[tuple[HookSpec, Outcome]]:
        """Every hook of `event` (whose matcher takes the tool name `matched`), in the order
        configured; what each said for the model redacted, its errors, blocks and messages told the user."""
        specs = [s for s in self.specs if s.event == event and s.matches(matched)]
        if not specs:
            return []
        name, path = self.session
        common = {"session_id": name, "transcript_path": path, "cwd": str(self.workspace), "hook_event_name": event}
        # ASCII: any text travels. Redacted as the model's copy is: a hook reads no secret the model would not
        payload = self.redact(json.dumps({**common, **fields}, default=str)).encode()
        ran = []
        for spec in specs:
            policy = command_policy(USER if spec.from_user else REPOSITORY, self.sandbox, sandbox=spec.sandboxed)
            run = run_hook(spec.command, payload, self.workspace, spec.timeout, self.project_env, policy)
            outcome = outcome_of(run, tool_event=event == "PreToolUse")
            outcome = replace(outcome, reason=self.redact(outcome.reason), context=self.redact(outcome.context))
            self._tell(event, spec, outcome)
            ran.append((spec, outcome))
        return ran

    def _tell(self, event: str, spec: HookSpec, outcome: Outcome) -> None:
        who = f"{event} hook ({_short(spec.command)})"
        if outcome.problem:
            self.emit(ev.Notice(f"{who} {outcome.problem}", "warning"))
        if outcome.blocked and event != "UserPromptSubmit":  # a blocked prompt is said as the turn's error
            self.emit(ev.Notice(f"{who} blocked it: {for_user(outcome.reason)}", "warning"))
        if outcome.message:
            self.emit(ev.Notice(f"{who}: {outcome.message}"))


def _attachment(event: str, text: str) -> str:
    """A hook's words as they travel to the model: headed, like every attachment (text.own_words)."""
    return f"[{event} hook output]\n{text}" if text else ""


def _short(command: str) -> str:
    command = " ".join(command.split())
    return for_user(command if len(command) <= COMMAND_CHARS else command[: COMMAND_CHARS - 1] + "…")
