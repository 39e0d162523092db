"""Helper agents for the `task` tool: work kept out of the parent's window.

A helper is an Agent of its own: the same workspace, the parent's system message (byte for
byte, so a prompt cache serves it), the parent's tools minus `task`, the parent's mode and
"always" answers, and its own context, step limit (task_max_steps) and session file beside
the parent's. It starts with the task as its only message; the parent gets back its final
answer alone (capped, headed by a note naming the helper's session), never its tool outputs.
Its events reach the parent's renderer wrapped in SubagentEvent, to be shown nested.
Ctrl-C stops the helper, answers the parent's call and stops the parent's turn.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import TYPE_CHECKING

from nanohermes import events as ev
from nanohermes.calls import one_line
from nanohermes.errors import NanoHermesError, ToolError, ToolInterrupted
from nanohermes.stops import about_helper
from nanohermes.storage.session import Session, sessions_dir

if TYPE_CHECKING:
    from nanohermes.loop.agent import Agent

DELEGATION_TOOLS = frozenset({"task"})  # a helper cannot start helpers: one level, bounded cost
ANSWER_MAX_CHARS = 6_000  # a conclusion, not a transcript (~1,500 tokens); the whole one is in its session
LABEL_CHARS = 60  # the description as a nested line's label and in the note
NAME_BASE_CHARS = 88  # session names are at most 100 chars: the parent's name, ".task", a number
HELPER_BRIEF = (
    "[You are a helper agent. Another agent gave you the task above; you share its workspace and tools but "
    "not its conversation, and it will see nothing of your work but your final reply. Use the tools until you "
    "can answer, then reply with the answer only: the conclusions, the facts behind them and exact paths and "
    "lines, as briefly as the task allows.]"
)


class Subagents:
    """Runs helpers for one parent Agent (set as `parent` once it exists: its ctx holds this)."""

    def __init__(self, parent: Agent | None = None):
        self.parent = parent

    def run(self, description: str, prompt: str) -> str:
        """The helper's answer for the parent, or ToolError when it failed or stopped early."""
        parent = self.parent
        if parent is None:
            raise ToolError("delegation is not set up in this session")
        label = one_line(description or "task", LABEL_CHARS)
        session = Session(
            parent.config.home, self._child_name(), workspace=parent.config.workspace, parent=parent.session.name
        )
        try:
            child = self._child(session, label)
            try:
                result = child.run_turn(f"{prompt.strip()}\n\n{HELPER_BRIEF}")
            except NanoHermesError as exc:  # the provider gave up, a session write failed, …
                raise ToolError(f"helper {label!r} failed: {exc} (its transcript: session {session.name})") from None
        finally:
            session.close()
        parent.approvals.unasked.extend(result.cannot_ask)  # a -p run reports what no one could approve
        if result.usage is not None:
            parent.sender.count_helper(result.usage)
            parent.emit(ev.SubagentEvent(label, result.usage))
        return answer_for_parent(label, session.name, result)

    def _child(self, session: Session, label: str) -> Agent:
        parent = self.parent
        config = replace(
            parent.config,
            max_steps=parent.config.task_max_steps,
            context_window=parent.settings.window or parent.config.context_window,
        )
        tools = [t for t in parent.tools.values() if t.name not in DELEGATION_TOOLS]
        ctx = replace(parent.ctx, subagents=None)  # its own outputs: its transcript's
        approvals = copy.copy(parent.approvals)  # the same mode, approver and "always" answers (shared)...
        approvals.unasked = []  # ...but its own list of refusals, which its turn clears
        emit = lambda event: parent.emit(ev.SubagentEvent(label, event))  # noqa: E731
        child = type(parent)(  # an Agent, as the parent is (agent.py imports this module)
            config=config,
            provider=parent.sender.provider,
            session=session,
            tools=tools,
            ctx=ctx,
            system_prompt=parent.system_prompt,
            emit=emit,
            approvals=approvals,
            hooks=parent.hooks.for_helper(emit),  # its answer is SubagentStop's; tool calls as the parent's
        )
        child.sender.cap = parent.sender.cap  # one spending cap: a helper's requests count, and stop it too
        return child

    def _child_name(self) -> str:
        """`PARENT.taskN`, the first N whose file does not exist yet (the parent's lock keeps
        another process from picking the same one)."""
        base, folder = self.parent.session.name[:NAME_BASE_CHARS], sessions_dir(self.parent.config.home)
        number = 1
        while (folder / f"{base}.task{number}.jsonl").exists():
            number += 1
        return f"{base}.task{number}"


def answer_for_parent(label: str, session_name: str, result: ev.TurnResult) -> str:
    """The parent's tool result: a note naming the helper's session, then its answer (capped).
    A helper that stopped before answering is an error, with whatever it said last."""
    said = result.final_text.strip()
    where = f"its transcript: session {session_name}"
    if result.stop_code == ev.StopCode.INTERRUPTED:
        raise ToolInterrupted(
            f"[interrupted by user: helper {label!r} was stopped after {_steps(result.steps)}; {where}]"
        )
    if result.stopped_reason is not None:
        why = about_helper(result.stop_code, _steps(result.steps), result.stop_detail)
        if said.startswith(ev.PARTIAL_MARK.strip()):  # its last request, tools off, gave the best it had
            raise ToolError(
                f"helper {label!r} stopped {why} ({where}). Its partial answer: {_capped(said, session_name)} "
                "Check what it left open, give it a narrower task, or do it yourself."
            )
        last = f" Its last words: {_capped(said, session_name)}" if said else ""
        raise ToolError(
            f"helper {label!r} stopped {why} without an answer ({where}).{last} "
            "Give it a narrower task, or do it yourself."
        )
    refused = f"; refused without approval: {', '.join(dict.fromkeys(result.cannot_ask))}" if result.cannot_ask else ""
    note = f"[helper {label!r} answered after {_steps(result.steps)}; {where}{refused}]"
    return f"{note}\n{_capped(said, session_name) or '(the helper gave an empty answer)'}"


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def _capped(text: str, session_name: str) -> str:
    if len(text) <= ANSWER_MAX_CHARS:
        return text
    return (
        text[:ANSWER_MAX_CHARS] + f"\n… answer cut ({len(text) - ANSWER_MAX_CHARS:,} chars omitted; "
        f"the whole answer ends session {session_name})"
    )
