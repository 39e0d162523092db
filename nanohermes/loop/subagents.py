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
import threading
from dataclasses import replace
from typing import TYPE_CHECKING

from nanohermes import events as ev
from nanohermes.calls import one_line
from nanohermes.errors import NanoHermesError, ToolError, ToolInterrupted
from nanohermes.loop.applying import Outcome, apply_changes
from nanohermes.loop.isolated import Ending, Held, Place, brief, changes_note, diff_of, helper_mode, here, place_for
from nanohermes.stops import about_helper
from nanohermes.storage.session import Session, sessions_dir
from nanohermes.storage.worktrees import FileChange, Repository, WorktreeError, Worktrees
from nanohermes.tools import ToolContext

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
        self._naming = threading.Lock()  # helpers in worktrees start side by side: one name each
        self._worktrees: Worktrees | None = None  # made with the first worktree helper
        self.held: dict[str, Held] = {}  # worktree helpers' changes not brought in, by name (/tasks)

    def run(self, description: str, prompt: str, worktree: bool = False, ctx: ToolContext | None = None) -> str:
        """The helper's answer for the parent, or ToolError when it failed or stopped early."""
        parent = self.parent
        if parent is None:
            raise ToolError("delegation is not set up in this session")
        label = one_line(description or "task", LABEL_CHARS)
        if worktree:
            return self._in_worktree(label, prompt, ctx or parent.ctx)
        session = self._session()
        emit = lambda event: parent.emit(ev.SubagentEvent(label, event))  # noqa: E731
        try:
            result = self._turn(self._child(session, emit), f"{prompt.strip()}\n\n{HELPER_BRIEF}", label, session)
        finally:
            session.close()
        self._count(label, result)
        return answer_for_parent(label, session.name, result)

    def _turn(self, child: Agent, request: str, label: str, session: Session) -> ev.TurnResult:
        try:
            return child.run_turn(request)
        except NanoHermesError as exc:  # the provider gave up, a session write failed, …
            raise ToolError(f"helper {label!r} failed: {exc} (its transcript: session {session.name})") from None

    def _count(self, label: str, result: ev.TurnResult) -> None:
        parent = self.parent
        parent.approvals.unasked.extend(result.cannot_ask)  # a -p run reports what no one could approve
        if result.usage is not None:
            parent.sender.count_helper(result.usage)
            parent.emit(ev.SubagentEvent(label, result.usage))

    def _child(self, session: Session, emit, place: Place | None = None) -> Agent:
        """The helper's Agent: the parent's tools but `task`, its mode and answers, its own context;
        in a worktree (`place`), its workspace, sandbox and questions there."""
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
        hooks = parent.hooks.for_helper(emit)  # its answer is SubagentStop's; tool calls as the parent's
        if place is not None:
            config = replace(config, workspace=place.workspace)
            ctx = replace(
                ctx, workspace=place.workspace, sandbox=place.sandbox, checkpoints=None, snapshots=None, tasks=None
            )
            ctx = replace(ctx, editor=None, on_loop=None)  # an editor's buffers are the workspace's files
            ctx = replace(ctx, diagnostics=None)  # the language servers' root is the workspace, not the worktree
            approvals.mode = helper_mode(approvals.mode)
            if approvals.approver is not None:
                approvals.approver = place.relayed(approvals.approver)
            approvals.warn = place.relayed(approvals.warn)
            hooks = parent.hooks.for_helper(emit, place.workspace, place.sandbox)
        child = type(parent)(  # an Agent, as the parent is (agent.py imports this module)
            config=config,
            provider=parent.sender.provider,
            session=session,
            tools=tools,
            ctx=ctx,
            system_prompt=parent.system_prompt,
            emit=emit,
            approvals=approvals,
            hooks=hooks,
        )
        child.sender.cap = parent.sender.cap  # one spending cap: a helper's requests count, and stop it too
        return child

    def _in_worktree(self, label: str, prompt: str, ctx: ToolContext) -> str:
        """A helper in a worktree of its own (loop/isolated.py); its changes brought in on the loop's
        thread as it answers, what is not held (/tasks)."""
        parent = self.parent
        session, name, place = self._start_in_worktree(label, ctx)
        emit = place.relayed(lambda event: parent.emit(ev.SubagentEvent(label, event, name)))
        request = f"{prompt.strip()}\n\n{HELPER_BRIEF}\n{brief(place, parent.config.workspace)}"
        result, failure = None, None
        try:
            result = self._turn(self._child(session, emit, place), request, label, session)
        except ToolError as exc:
            failure = exc
        finally:
            session.close()
        try:
            changes, diff = self._worktrees_dir().changes(place.worktree)
        except WorktreeError as exc:
            changes, diff = [FileChange("…", None, None, note=f"its changes could not be read: {exc}")], ""
        ending = Ending(label, name, session.name, result, failure, changes, diff)
        try:
            settled = place.on_loop(lambda: self._settle(ending, place, ctx))
        except BaseException:  # the loop stopped waiting (Ctrl-C): nothing more is brought in; all is held
            self._hold(ending, changes, place)
            if not changes:
                self._worktrees_dir().remove(place.worktree)
            raise
        if ending.name not in self.held:  # all brought in: its worktree goes, on this thread
            self._worktrees_dir().remove(place.worktree)
        if isinstance(settled, BaseException):
            raise settled
        return settled

    def _start_in_worktree(self, label: str, ctx: ToolContext) -> tuple[Session, str, Place]:
        workspace = self.parent.config.workspace
        try:
            Repository.of(workspace)  # before a session is made for it
        except WorktreeError as exc:
            raise ToolError(f"helper {label!r} cannot work in a worktree: {exc}") from None
        session = self._session()
        name = session.name.rsplit(".", 1)[1]
        try:
            return (
                session,
                name,
                place_for(self._worktrees_dir(), name, workspace, self.parent.ctx.sandbox, ctx.on_loop or here),
            )
        except WorktreeError as exc:
            session.close()
            raise ToolError(f"helper {label!r} cannot work in a worktree: {exc}") from None

    def _settle(self, ending: Ending, place: Place, ctx: ToolContext) -> str | BaseException:
        """On the loop's thread: the helper counted, its changes brought in when it answered, the rest
        held; the parent's result, or the exception to raise in its place (raised on the helper's thread)."""
        parent = self.parent
        if ending.result is not None:
            self._count(ending.label, ending.result)
        changes, outcome = ending.changes, None
        if ending.answered and changes:
            source = f"{ending.label!r} ({ending.name})"
            outcome = apply_changes(changes, ctx, parent.emit, parent.approvals, source)
        left = [change for change, _ in outcome.left] if outcome is not None else changes
        self._hold(ending, left, place)
        note = changes_note(ending.name, changes, outcome, ending.diff, bool(left))
        if ending.failure is not None:
            return ToolError(f"{ending.failure}{note}")
        try:
            return answer_for_parent(ending.label, ending.session, ending.result) + note
        except ToolInterrupted as stop:
            return ToolInterrupted(stop.answer + note)
        except ToolError as exc:
            return ToolError(f"{exc}{note}")

    def _hold(self, ending: Ending, left: list[FileChange], place: Place) -> None:
        """Keep what was not brought in, and the worktree, for /tasks (else the caller removes it)."""
        if left:
            diff = diff_of(ending.diff, {change.path for change in left})
            self.held[ending.name] = Held(ending.name, ending.label, left, diff, place.worktree)
        else:
            self.held.pop(ending.name, None)

    def apply_held(self, name: str) -> Outcome:
        """The user brings a held helper's changes in (/tasks apply): nothing is asked; what cannot be
        written (a conflict) stays held. KeyError for a name not held."""
        held = self.held[name]
        parent = self.parent
        outcome = apply_changes(held.changes, parent.ctx, parent.emit)
        left = [change for change, _ in outcome.left]
        if left:
            held.changes = left
        else:
            self.drop_held(name)
        return outcome

    def drop_held(self, name: str) -> None:
        """A held helper's changes dropped and its worktree removed. KeyError for a name not held."""
        held = self.held.pop(name)
        self._worktrees_dir().remove(held.worktree)

    def close(self) -> None:
        """The session ends: every worktree removed (what was held with it)."""
        self.held.clear()
        if self._worktrees is not None:
            self._worktrees.close()

    def _worktrees_dir(self) -> Worktrees:
        with self._naming:  # helpers start side by side: one Worktrees for them all
            if self._worktrees is None:
                self._worktrees = Worktrees(self.parent.config.home, self.parent.session.name)
            return self._worktrees

    def _session(self) -> Session:
        """`PARENT.taskN`, the first N whose file does not exist yet, opened (the parent's lock keeps
        another process from picking the same one; `_naming`, another helper of this session)."""
        parent = self.parent
        base, folder = parent.session.name[:NAME_BASE_CHARS], sessions_dir(parent.config.home)
        with self._naming:
            number = 1
            while (folder / f"{base}.task{number}.jsonl").exists():
                number += 1
            return Session(
                parent.config.home,
                f"{base}.task{number}",
                workspace=parent.config.workspace,
                parent=parent.session.name,
            )


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
