"""One editor session: a runtime of its own, the updates it sends and the questions it asks.

Two threads meet here. The protocol's asyncio loop owns the connection: it sends this
session's updates in order, one sender task per session, and asks the client for permissions.
The main thread runs the turn (acp/runner.py): the loop's events arrive in `emit`, approvals
in `approve`, which waits for the editor's answer (a cancel interrupts the wait like Ctrl-C).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging

from acp import text_block, tool_content, tool_diff_content
from acp.helpers import update_available_commands
from acp.schema import PermissionOption, ToolCallUpdate

from nanohermes import events as ev
from nanohermes.acp import choices, commands, forms, updates
from nanohermes.acp.outcome_view import markdown
from nanohermes.loop.approvals import YES_ANSWERS, Decision
from nanohermes.mcp.asking import DECLINE, Question, Reply, form_choices

log = logging.getLogger("nanohermes.acp")

PREVIEW_CHARS = 8_000  # what a permission request shows of a diff or a command
ANSWERS = {"allow": Decision("yes"), "always": Decision("always"), "reject": Decision("no")}
CANNOT_ASK = "\0cannot-ask"  # what a question the editor could not ask resolves to (no option id is this)
COMMAND_DONE = "command"  # what a prompt that was a slash command returns instead of a TurnResult


class AcpSession:
    def __init__(self, conn, loop: asyncio.AbstractEventLoop, runner):
        self.conn, self.loop, self.runner = conn, loop, runner
        self.served: list[str] = []  # the models the editor may choose (the configured one first)
        self.pending_model: str | None = None  # a model switch asked for while a turn ran
        self.id = ""  # the saved session's name, once the runtime is built
        self.runtime = None
        self.outbox: asyncio.Queue = asyncio.Queue()
        self.sender: asyncio.Task | None = None
        self.job: concurrent.futures.Future | None = None  # the prompt queued or running
        self.pending_mode: str | None = None  # a mode switch asked for while a turn ran
        self._open_calls: dict[str, str] = {}  # started, not finished (ordered): id -> the status sent
        self._titles: dict[str, str] = {}  # the open calls' card titles (a question repeats its card's)
        self._current_call = ""  # the parent's running call (a helper's calls are shown under it)
        self._asking = ""  # the card of the latest call started: the one a question is about
        self._helper_calls: dict[str, str] = {}  # a helper's call id (its tag's/ too) -> the id the editor knows
        self.reply = ev.ReplyOnScreen()  # what the editor was sent of the reply being streamed
        self._visible = False  # the reply being streamed has shown the editor more than whitespace
        self._restarted_visible = False  # …and had, when its request was retried
        self.forms = False  # the editor declared ACP's (unstable) elicitation forms (forms.py)
        self._announced: list = []  # the slash commands the editor was last told of

    def attach(self, runtime) -> None:
        """On the loop: the runtime is built; start sending (warnings from the build go first, then
        the slash commands this session offers)."""
        self.runtime, self.id = runtime, runtime.session.name
        self.sender = self.loop.create_task(self._send_updates())
        self._announced = commands.announced(runtime)
        self.outbox.put_nowait(("update", update_available_commands(self._announced)))

    def announce_if_changed(self) -> None:
        """The slash commands again, when they changed (an MCP server's prompts became known)."""
        now = commands.announced(self.runtime)
        if now != self._announced:
            self._announced = now
            self._send(update_available_commands(now))

    def modes(self):
        return choices.modes(self.runtime.config.mode)

    def options(self) -> list:
        """The session's config options: the mode and the model, a switch asked for mid-turn shown as made."""
        mode = self.pending_mode or self.runtime.config.mode
        return choices.options(mode, self.pending_model or self.runtime.config.model, self.served)

    # -- the protocol's thread ---------------------------------------------------------------

    async def _send_updates(self) -> None:
        while True:
            kind, payload = await self.outbox.get()
            try:
                if kind == "update":
                    await self.conn.session_update(session_id=self.id, update=payload)
                elif kind == "form":  # a server's form: asked without holding up this queue's other items
                    card, question, answer = payload
                    self._start_asking(forms.ask_editor(self.conn, self.id, card, question), answer)
                else:  # a permission question, the same
                    tool_call, options, answer = payload
                    self._start_asking(self._ask(tool_call, options, answer), answer)
            except Exception as exc:  # the client went away or rejected one update: the turn goes on
                log.warning("session %s: an update was not delivered: %s", self.id, exc)
            finally:
                self.outbox.task_done()

    def _start_asking(self, asking, answer: concurrent.futures.Future) -> None:
        """Run `asking` (a question to the editor); a form's answer is what it returns."""

        async def settled():
            reply = await asking
            if reply is not None:
                with contextlib.suppress(concurrent.futures.InvalidStateError):  # the turn was cancelled meanwhile
                    answer.set_result(reply)

        task = asyncio.create_task(settled())

        def forget_when_cancelled(future: concurrent.futures.Future) -> None:
            if future.cancelled():  # the turn was stopped (in the main thread): stop waiting for the editor
                self.loop.call_soon_threadsafe(task.cancel)

        answer.add_done_callback(forget_when_cancelled)

    async def _ask(self, tool_call: ToolCallUpdate, options: list, answer: concurrent.futures.Future) -> None:
        try:
            response = await self.conn.request_permission(session_id=self.id, tool_call=tool_call, options=options)
            outcome = response.outcome
            decision = None if outcome.outcome == "cancelled" else outcome.option_id
        except asyncio.CancelledError:
            return
        except Exception as exc:  # an editor that cannot ask: the action is not run
            log.warning("session %s: the permission request failed: %s", self.id, exc)
            decision = CANNOT_ASK
        try:
            answer.set_result(decision)
        except concurrent.futures.InvalidStateError:
            pass  # the turn was cancelled meanwhile

    async def flush(self) -> None:
        """Every update queued so far has been sent (before a prompt's response)."""
        await self.outbox.join()

    def send_history(self) -> None:
        """The saved conversation; first, as the CLI says on resume, where it was started when that
        is not the editor's folder (its tools now act in this one)."""
        started, working = self.runtime.session.state.workspace, self.runtime.config.workspace
        if started and started != str(working):
            self.outbox.put_nowait(("update", updates.thought(updates.started_elsewhere(started, working))))
        state = self.runtime.session.state
        for update in updates.history(state.messages, working, state.facts):
            self.outbox.put_nowait(("update", update))

    def set_mode(self, mode: str) -> None:
        """Now when no turn runs; else before this session's next turn."""
        if self.job is not None and not self.job.done():
            self.pending_mode = mode
        else:
            self.runtime.switch(mode=mode)

    def set_model(self, model: str) -> None:
        """From the next request: now when no turn runs; else before this session's next turn."""
        if self.job is not None and not self.job.done():
            self.pending_model = model
        else:
            self.runtime.switch(model=model)

    # -- the main thread ---------------------------------------------------------------------

    def _send(self, update) -> None:
        self.loop.call_soon_threadsafe(self.outbox.put_nowait, ("update", update))

    send_update = _send  # for the editor's terminal (editor_files.py): in order with the rest

    @property
    def running_card(self) -> str:
        """The card of the call running now (a command the editor's terminal runs is shown in it)."""
        return self._asking

    def run_prompt(self, text: str) -> ev.TurnResult | str:
        """The job a prompt queues: a slash command, or one turn; every call it leaves open is closed
        for the editor."""
        if self.pending_mode is not None or self.pending_model is not None:
            self.runtime.switch(mode=self.pending_mode, model=self.pending_model)
            self.pending_mode = self.pending_model = None
        mentions = None  # all of `text` is the user's words, unless a command file's prompt replaces it
        if (outcome := commands.take(text, self.runtime)) is not None:
            if outcome.prompt is None:
                self._send(updates.text_delta(markdown(outcome)))
                return COMMAND_DONE
            if outcome.blocks:  # what a custom command's `!` commands did
                self._send(updates.thought(markdown(outcome) + "\n"))
            text, mentions = outcome.prompt, outcome.mentions
        try:
            result = self.runtime.agent.run_turn(text, mentions=mentions)
            steps = updates.plan_steps(result.final_text) if self.runtime.config.mode == "plan" else []
            if steps and result.stop_code is None:  # what plan mode proposed, as the editor's checklist
                self._send(updates.plan(steps))
            return result
        finally:
            for call_id in list(self._open_calls):
                self._send(updates.interrupted(call_id))
            self._open_calls.clear()
            self._titles.clear()
            self.announce_if_changed()

    def emit(self, event) -> None:
        """The loop's events as updates (and a helper's tool calls, named after its task)."""
        if isinstance(event, ev.SubagentEvent):
            return self._helper_event(event)
        workspace = self.runtime.config.workspace if self.runtime else None
        if isinstance(event, ev.TextDelta):
            self._reply_text(event.text)
        elif isinstance(event, ev.StreamRestarted):
            self.reply.restart()
            self._restarted_visible = self._visible
        elif isinstance(event, (ev.RequestStarted, ev.AssistantMessageDone)):
            self.reply.new_reply()
            self._visible = self._restarted_visible = False
        elif isinstance(event, ev.ToolStarted):
            status = self._first_status(event)
            self._open_calls[event.call_id] = status
            self._current_call = event.call_id
            self._asking = event.call_id
            self._start(updates.tool_started(event, workspace, status=status))
        elif isinstance(event, ev.ToolProgress):
            self._open_calls[event.call_id] = "in_progress"
            self._send(updates.tool_progress(event))
        elif isinstance(event, ev.ToolFinished):
            self._open_calls.pop(event.call_id, None)
            self._titles.pop(event.call_id, None)
            output = self.runtime.agent.full_output(event.call_id)
            self._send(updates.tool_finished(event, output, updates.applied_diff(self.runtime.checkpoints, event)))
        elif isinstance(event, ev.Notice):
            self._send(updates.thought(f"[{event.level}] {event.text}\n"))
        elif isinstance(event, ev.CacheMiss):
            from nanohermes.cost import miss_line

            self._send(updates.thought(f"[info] {miss_line(event)}\n"))

    def _reply_text(self, delta: str) -> None:
        """A retried reply shows only what it adds; one that says something else is marked as such,
        unless what the editor had of the first attempt was nothing or whitespace."""
        text, differs = self.reply.add(delta)
        if not text:
            return
        if differs and self._restarted_visible:
            text = updates.RESTARTED + text
        self._visible = self._visible or bool(text.strip())
        self._send(updates.text_delta(text))

    def _first_status(self, event: ev.ToolStarted) -> str:
        """A call the user will be asked about starts `pending` (it goes `in_progress` once allowed);
        any other runs at once."""
        agent = self.runtime.agent
        tool = agent.tools.get(event.name)
        return (
            "pending" if tool is not None and agent.approvals.asks(tool, event.arguments, agent.ctx) else "in_progress"
        )

    def _start(self, card) -> None:
        self._titles[card.tool_call_id] = card.title
        self._send(card)

    def _running(self, card: str) -> None:
        """The call was allowed: it runs now (a status never goes back to pending)."""
        if self._open_calls.get(card) == "pending":
            self._open_calls[card] = "in_progress"
            self._send(updates.running(card))

    def _helper_event(self, wrapped: ev.SubagentEvent) -> None:
        event, parent = wrapped.event, self._current_call
        own = f"{wrapped.tag}/{event.call_id}" if wrapped.tag else getattr(event, "call_id", "")  # side by side: whose
        if isinstance(event, ev.ToolStarted):
            shown = self._helper_calls[own] = f"{parent}/{own}"
            status = self._open_calls[shown] = self._first_status(event)
            self._asking = shown  # its question is about its own card, not the parent's
            workspace = self.runtime.config.workspace
            self._start(updates.tool_started(event, workspace, shown, label=wrapped.label, status=status))
        elif isinstance(event, ev.ToolFinished) and own in self._helper_calls:
            shown = self._helper_calls.pop(own)
            self._open_calls.pop(shown, None)
            self._titles.pop(shown, None)
            self._asking = parent
            self._send(updates.tool_finished(event, None, call_id=shown))

    def approve(self, tool, args: dict, preview: str) -> Decision:
        """Ask the editor; its answer is our yes, always (saved for this project) or no. A cancel stops
        the wait (Ctrl-C). The question is about the call's own card: its title and status stay."""
        agent = self.runtime.agent
        scope = agent.approvals.scope(tool, args, agent.ctx)  # None: asked every time, no "always"
        options = [PermissionOption(option_id="allow", name="Allow", kind="allow_once")]
        if scope is not None:
            options.append(
                PermissionOption(option_id="always", name=f"Always allow: {scope.describe()}", kind="allow_always")
            )
        options.append(PermissionOption(option_id="reject", name="Reject", kind="reject_once"))
        card = self._asking
        question = ToolCallUpdate(
            tool_call_id=card,
            title=self._titles.get(card),
            kind=updates.KINDS.get(tool.name, "other"),
            raw_input=args,
            content=self._change(tool.name, args, preview),
        )
        picked = self._question(question, options)
        if picked is None:  # the editor cancelled the question: stop the turn, as Esc at the prompt does
            raise KeyboardInterrupt
        decision = Decision("no", "the editor could not ask the user") if picked == CANNOT_ASK else ANSWERS.get(picked)
        decision = decision or Decision("no")
        if decision.answer in YES_ANSWERS:
            self._running(card)
        return decision

    def _question(self, question, options: list | None = None, kind: str = "ask"):
        """Ask the editor (from the main thread) and wait: the option picked, None when the editor
        cancelled, CANNOT_ASK when it could not ask (a form: its Reply). Ctrl-C (a cancel) stops the wait."""
        answer: concurrent.futures.Future = concurrent.futures.Future()
        payload = (self._asking, question, answer) if kind == "form" else (question, options, answer)
        self.loop.call_soon_threadsafe(self.outbox.put_nowait, (kind, payload))
        try:
            return answer.result()
        except BaseException:  # Ctrl-C (a cancel): no answer will be used
            answer.cancel()
            raise

    def ask_form(self, form: Question) -> Reply:
        """An MCP server's question (elicitation): a form to an editor that declared ACP's unstable
        elicitation/create (forms.py), else a permission request on the running call's card — a plain
        confirmation, or one field of choices or yes/no, as its options; any other question is
        declined, the reason said to the user and in the call's result."""
        if form.url:
            return self._declined(form, forms.NO_PAGES)
        if self.forms:
            return self._question(form, kind="form")
        choices = form_choices(form)
        if choices is None:
            return self._declined(form, forms.NO_FORMS)
        card = self._asking
        asked = f"{form.server} asks: {form.message}"
        question = ToolCallUpdate(
            tool_call_id=card, title=self._titles.get(card), content=[tool_content(text_block(asked))]
        )
        return forms.reply_for_button(self._question(question, forms.buttons(choices)), choices)

    def _declined(self, form: Question, why: str) -> Reply:
        self._send(updates.thought(f"[warning] {form.server} asked: {form.message} — {why}\n"))
        return Reply(DECLINE, note=why)

    def _change(self, tool_name: str, args: dict, preview: str) -> list:
        """What the user approves: a write or an edit as the change it makes (a `diff` block the
        editor shows as one), anything else as its preview."""
        planned = updates.planned_change(self.runtime.agent.ctx, tool_name, args)
        if planned is not None:
            return [tool_diff_content(*planned)]
        shown = preview if len(preview) <= PREVIEW_CHARS else preview[:PREVIEW_CHARS] + "\n…"
        return [tool_content(text_block(shown))]

    def close(self) -> None:
        """On the main thread, at the end: background tasks and MCP servers stop, the session is saved."""
        if self.runtime is not None:
            self.runtime.close()
