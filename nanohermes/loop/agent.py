"""The loop: user input → (fit the context → request → tool calls)* → answer.

One small class owns the conversation (its transcript) and the tool context. A turn (turn.py)
lives for one request and leaves the loop by an exception — Answered, StopTurn (a code the front
ends word, stops.py) or an interrupt — with the history valid whichever way. Collaborators: the
sender, the keeper, the tool runner, the turn's coaching strategy (loop/coach/: what to do about a
reply beyond running it) and ending (a turn's answer when the model gave none); front ends see events
and the last properties.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from nanohermes import events as ev
from nanohermes.config import Config
from nanohermes.errors import ContextOverflowError, Terminated, ToolInterrupted
from nanohermes.loop import ending, history
from nanohermes.loop.approvals import Approvals
from nanohermes.loop.coach.choice import Coaching
from nanohermes.loop.execute import ToolRunner
from nanohermes.loop.keeper import ContextKeeper
from nanohermes.loop.nudges import CUT_ANSWER_NOTICES, REWOUND_ACK, Nudge
from nanohermes.loop.sender import RequestSender
from nanohermes.loop.subagents import Subagents
from nanohermes.loop.transcript import Transcript
from nanohermes.loop.turn import Answered, StopTurn, Turn
from nanohermes.memory.entry_points import block_for
from nanohermes.prompt.mentions import Attachment, Mentions, attachment, named_files
from nanohermes.provider import AssistantTurn, Provider
from nanohermes.provider.vision import vision_refusal
from nanohermes.sandbox.actors import MODEL, command_policy
from nanohermes.signals import deferred
from nanohermes.storage.session import Session
from nanohermes.synthetic import tagged
from nanohermes.tools import Tool, ToolContext

MAX_OVERFLOW_RETRIES = 2  # compact-and-retry attempts after a context-length error
UNASKED = object()  # what the server says of images, before the first image asks


class Agent:
    def __init__(
        self,
        *,
        config: Config,
        provider: Provider,
        session: Session,
        tools: list[Tool],
        ctx: ToolContext,
        system_prompt: Callable[[], str],
        emit: Callable[[object], None],
        approvals: Approvals,
        recalls: bool = False,
        hooks=None,  # hooks/__init__.py's Hooks (None: no hooks)
    ):
        """No I/O (resume() mends a resumed session). `recalls`: a user message carries the memory
        block of what ctx.memory holds relevant to it (a session's agent; not a helper's)."""
        self.config, self.session, self.emit, self.approvals = config, session, emit, approvals
        self.system_prompt, self.recalls = system_prompt, recalls
        self.tools = {t.name: t for t in tools}  # all known, so plan mode can say why one is blocked
        self.transcript = Transcript(session, ctx.redactor, system_prompt())
        say = lambda event: self.emit(event)  # noqa: E731  (the collaborators speak through self.emit, even a new one)
        self.keeper = ContextKeeper.for_config(config, session.record_compaction, say, ctx.memory, approvals.for_memory)
        self.sender = RequestSender(provider, session.record_usage, self.keeper.observe, say)
        self.runner = ToolRunner(self.tools, approvals, say, hooks, config.task_parallel)  # hooks: compaction's too
        self.hooks = self.keeper.hooks = self.runner.hooks
        self.coaching = Coaching.for_config(config, self.hooks, say)
        self.recall_offered = session.state.cut_or_cleared  # recall joins the tool list at the first compaction
        self._vision: str | object | None = UNASKED  # why the model is sent no images (image_refusal)
        # The tools read the outputs the transcript records (recall); a helper agent is `task`'s.
        subagents = Subagents(self) if "task" in self.tools else ctx.subagents
        self._ctx = replace(ctx, outputs=self.transcript.outputs, subagents=subagents)

    def resume(self) -> None:
        """A run killed mid-tool left calls without results: answer them, so the history is valid."""
        self.transcript.answer_open_calls(history.NO_RESULT_AFTER_CRASH)

    def run_turn(self, user_text: str, context: str = "", mentions: Mentions | None = None) -> ev.TurnResult:
        """Run one user request to its answer (`context`: the user's addition, a `!command`'s output;
        `mentions`: where files may be named, when not all of `user_text` is the user's words — its
        `typed` words are also all the coaching keys on, loop/coach/). Ctrl-C and SIGTERM end it with a
        valid history (SIGTERM raised again); cannot_ask: calls refused unasked."""
        self.runner.new_turn()
        turn = Turn(user_text if mentions is None else mentions.typed)
        self.sender.usage = turn.usage
        try:
            self.learn_window()
            lean = self.settings.lean_tools
            turn.coach = self.coaching.for_turn(turn.request, lean)
            text = self.transcript.clean(user_text)
            files = attachment(text, self.ctx, mentions)  # an image the model cannot take: ImagesRefused, nothing sent
            context = self.hooks.before_request(user_text, context)  # SessionStart's, UserPromptSubmit's
            turn.attached = self._request(turn, text, files, context, mentions, lean)
            while True:
                self._step(turn)
        except Answered as answered:
            result = ev.TurnResult(ending.said(self, answered), turn.steps, turn.usage.event())
        except StopTurn as stop:
            answer = ending.final_answer(self, turn, stop) or history.last_assistant_text(self.messages)
            result = ev.TurnResult(answer, turn.steps, turn.usage.event(), "limit", stop.code, stop.detail)
        except (ToolInterrupted, KeyboardInterrupt, Terminated) as stop:  # every call gets a result
            result = self._interrupted(turn, stop)
        result.cannot_ask = list(self.approvals.unasked)
        return result

    def _step(self, turn: Turn) -> None:
        """One request and what follows from it; Answered or StopTurn when the turn is over."""
        if turn.steps >= self.config.max_steps:
            raise StopTurn(ev.StopCode.MAX_STEPS, steps=turn.steps, max_steps=self.config.max_steps)
        self.sender.cap.check()  # the spending cap: before a request, never in the middle of one
        if ahead := turn.coach.before_request(self.tool_schemas()):
            self._nudge(ahead)
        self.fit_context()
        reply = self.request(turn, **turn.coach.options(ahead, self.config.temperature))
        turn.steps += 1
        verdict = turn.coach.after_reply(reply, self.tool_schemas(), self._ctx.workspace, self.messages)
        if verdict.repaired:  # calls written as text, or a file written whole, run as calls
            self.emit(ev.Notice(verdict.repaired, "warning"))
        reply = verdict.reply
        if nudge := verdict.nudge:
            self.transcript.add(nudge.kept_of(reply))
            self.emit(ev.AssistantMessageDone(reply.content, True))  # what streamed of it is over
            self._nudge(nudge)
            return
        self.transcript.add(reply.as_message())
        if not reply.tool_calls:
            self.emit(ev.AssistantMessageDone(reply.content, False))
            if cut := CUT_ANSWER_NOTICES.get(reply.finish_reason or ""):  # never pass a cut answer as whole
                self.emit(ev.Notice(cut, "warning"))
            raise Answered(reply.content)
        results = self.runner.run(turn, reply, self.ctx, self.transcript)
        if nudge := turn.coach.after_results(reply, results, self.tool_schemas()):
            self._nudge(nudge)
        self.fit_context()

    def request(self, turn: Turn, **options) -> AssistantTurn:
        """Stream one reply; on a context-length error compact and retry (bounded)."""

        def send() -> AssistantTurn:
            self.transcript.set_system(self.system_prompt())  # new MCP tools only
            return self.sender.stream(
                turn, self.messages, self.tool_schemas(), max_tokens=self.settings.max_tokens, **options
            )

        for _ in range(MAX_OVERFLOW_RETRIES):
            try:
                return send()
            except ContextOverflowError as exc:
                self.fit_context(force=True, overflow_tokens=self.keeper.overflowed(exc))
        return send()  # overflowing still: the error goes up

    def _interrupted(self, turn: Turn, stop: BaseException) -> ev.TurnResult:
        """Ctrl-C, SIGTERM or a stopped helper: every open call answered, what streamed kept."""
        with deferred():  # a second Ctrl-C must not tear the clean-up (signals.py)
            streamed = "".join(turn.streamed)
            self.transcript.interrupted(stop, streamed)
            if not isinstance(stop, ToolInterrupted):  # the request in flight is counted, estimated
                turn.usage.interrupted(self.keeper.tokens.estimate, streamed)
        if isinstance(stop, Terminated):  # SIGTERM/SIGHUP: the history is valid; now leave
            raise stop
        usage = turn.usage.event()
        return ev.TurnResult(history.INTERRUPTED, turn.steps, usage, "interrupted", ev.StopCode.INTERRUPTED)

    def _request(
        self, turn: Turn, text: str, files: Attachment, context: str, mentions: Mentions | None, lean: bool
    ) -> dict[str, str]:
        """The request worked out here and handed to the transcript as values: the user's words (`text`,
        as the transcript cleans them), what goes with them (the user's `context`, the files the words
        name and their images, the coach's note after them) and the memory block. Returns what was
        attached of each file."""
        attached = files.attached
        note = turn.coach.note(attached, self._asked(attached, mentions), lean, self.tool_schemas())
        block = ""
        if self.recalls and self.ctx.memory is not None:
            block, warning = block_for(self.ctx.memory, text)
            if warning:
                self.emit(ev.Notice(warning, "warning"))
        joined = "\n\n".join(part for part in (context, files.block, note) if part)
        self.transcript.add_request(text, joined, block, files.images)
        return attached

    def _asked(self, attached: dict[str, str], mentions: Mentions | None) -> dict[str, str]:
        """Of the files attached to a request, those the user typed (all when all of it is theirs)."""
        if mentions is None:
            return attached
        typed = named_files(mentions.typed, self.ctx) if mentions.typed.strip() else []
        return {path: attached[path] for path in typed if path in attached}

    def tell(self, kind: str, text: str) -> None:
        """A front end's note for the model (what /undo took back, `kind` nudges.UNDONE): a tagged
        message of its own, answered so the roles alternate; never glued into the user's words."""
        self.transcript.add_note(kind, f"[{text}]", alternate=True)
        self.transcript.add(tagged({"role": "assistant", "content": REWOUND_ACK}, kind))

    def _nudge(self, nudge: Nudge) -> None:
        self.emit(ev.Notice(nudge.notice, "warning"))
        self.transcript.add_note(nudge.kind, nudge.text)

    def fit_context(self, **how):
        """Keep what is sent within the window (`how`: keeper.fit's force, focus, overflow_tokens)."""
        facts, tools = self.transcript.outputs.facts(), self.tool_schemas()
        summarize = lambda request: self.sender.summarize(request, tools, self.settings.max_tokens)  # noqa: E731
        messages, report = self.keeper.fit(self.messages, summarize, facts, tools=tools, **how)
        self.transcript.compacted(messages)
        self.recall_offered |= bool(report and report.layers)
        return report

    def tool_schemas(self) -> list[dict]:
        return self.runner.schemas(self.settings.lean_tools, self.recall_offered)

    def switch(self, config: Config) -> None:
        """/model or /mode, from the next request: besides /reset, the one place the prompt prefix
        changes in a session (the mode line, which the caller rebuilt; plan mode's fewer tools)."""
        self.config = self.sender.provider.config = config
        self.coaching = Coaching.for_config(config, self.hooks, self.emit)  # another model: its own evidence
        self.keeper.reuse_prefix(config.effective_summary_model == config.model)
        self.approvals.mode = config.mode
        self._vision = UNASKED  # another model: the server is asked again on its first image
        self.transcript.set_system(self.system_prompt())

    def reset(self) -> None:
        self.transcript.restart(self.system_prompt())
        self.keeper.reset()
        self.runner.guard.reset()
        self.approvals.reset()

    @property
    def messages(self) -> list[dict]:
        return self.transcript.messages

    @property
    def settings(self):
        return self.keeper.settings

    def learn_window(self) -> None:
        """Ask the server for the model's window once while unknown (run_turn does; a front end may first)."""
        if self.settings.window is None and (n_ctx := self.sender.advertised_window()):
            self.keeper.learn_window(n_ctx)

    @property
    def ctx(self) -> ToolContext:
        """The tools' context: its output cap scaled to the window, and the policy the model's commands
        run under in this mode (plan mode: read-only; sandbox/actors.py)."""
        sandbox = command_policy(MODEL, self._ctx.sandbox, mode=self.approvals.mode)
        return replace(
            self._ctx, max_output=self.settings.tool_result_bytes, sandbox=sandbox, vision=self.image_refusal
        )

    def image_refusal(self) -> str | None:
        """Why the model is not sent an image, in a sentence (None: it is): config.toml's `vision`, else
        what the server says, asked on the first image (provider/vision.py)."""
        if self._vision is UNASKED:
            configured = self.config.vision
            learned = self.sender.provider.learn_vision() if configured is None else None
            self._vision = vision_refusal(configured, learned, self.config.model)
        return self._vision

    @property
    def helpers(self):  # loop/subagents.py's Subagents: worktree helpers' held changes (/tasks); None without `task`
        return self._ctx.subagents

    @property
    def tasks(self):  # the session's background tasks (tools/background.py); None where there are none
        return self._ctx.tasks

    def context_status(self):
        return self.keeper.status(self.messages, self.sender.last_usage, self.sender.spent.event())

    def full_output(self, call_id: str) -> str | None:
        return self.transcript.outputs.get(call_id)
