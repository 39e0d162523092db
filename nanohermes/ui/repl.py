"""The interactive loop: what a line at the prompt means — a slash command, `!command` (the
user's own, ui/shell_escape.py), `exit`/`quit`, or a message (its `@paths` checked before it is
sent) — and the keyboard while a turn runs (ui/keys.py: Esc stops it, typed text shows on an
input line and Enter queues it, sent when the turn ends). The prompt itself: ui/prompt_input.py.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from nanohermes.calls import WRITING_TOOLS, action_title
from nanohermes.config import MODES, Config
from nanohermes.errors import NanoHermesError
from nanohermes.ui.escape import neutralize
from nanohermes.ui.switch_commands import next_mode, session_names

LEAVE_WORDS = frozenset({"exit", "quit"})  # a bare word a shell user types to leave, never worth a request
DOUBLE_CTRL_C_S = 1.0  # two Ctrl-C at an empty prompt this close together leave, as in Claude Code
CTRL_C_HINT = "· press Ctrl-C again to exit (Ctrl-D and /exit leave too)"


class Repl:
    """The REPL. Its session (the runtime, the renderer, the keyboard) is built by ui/repl_start.py:
    for a new session on a thread once the first prompt is drawn; an attribute built there waits
    for it when asked for before it is ready (__getattr__)."""

    def __init__(self, config: Config, session_name: str | None, trust_workspace: bool = False):
        from nanohermes.ui.completion import CachedListing
        from nanohermes.ui.keys import KeyWatcher
        from nanohermes.ui.notify import Notifier
        from nanohermes.ui.prompt_input import PromptInput
        from nanohermes.ui.repl_start import Start, StartMenu
        from nanohermes.ui.theme import chosen

        self.config = config  # as started; self.runtime.config after a /model or /mode switch
        self.endpoint = None  # started with the first prompt (ui/endpoint.py says why)
        self._prompting = False
        self._drawn = threading.Event()  # the first prompt is on the screen
        self.context_for_model: list[str] = []  # what `!commands` printed, sent with the next message
        self.queued: list[str] = []  # messages Enter queued while a turn ran, sent in order after it
        self._typed = ""  # the next prompt starts with this (typed while a turn ran, or a message held back)
        self._held_back = ""  # a message not sent once because an @path in it names nothing
        self._last_ctrl_c = float("-inf")
        self.theme = chosen(config.theme)  # before anything reads the keyboard: "auto" asks the terminal
        self.notifier = Notifier(config.notify, config.notify_after)
        self.keys = KeyWatcher() if KeyWatcher.available() else None  # first: what is typed while the REPL starts
        arguments = {
            "/model": self.models,
            "/mode": lambda: MODES,
            "/resume": lambda: session_names(self.config.home),
        }
        files = CachedListing(self.workspace_files)
        self.start = Start(self, session_name, trust_workspace)
        self.input = PromptInput(config.home / "history", StartMenu(self.start), arguments, files, self.cycle_mode)
        self.input.drawn += [self._drawn.set, self.start.go]
        self.start.begin()

    def __getattr__(self, name: str):
        """An attribute the start builds (runtime, console, renderer, custom, totals, trust),
        asked for before it is built: wait for it (raises what the build raised)."""
        if name.startswith("__") or "start" not in self.__dict__:
            raise AttributeError(name)
        self.start.wait()
        return object.__getattribute__(self, name)

    def say(self, text: str, style: str = "") -> None:
        self.console.print(neutralize(text), markup=False, highlight=False, style=style or None)

    def show(self, lines) -> None:
        """Lines of (text, style) spans, as ui/toolview.py and ui/context_view.py build them."""
        self.renderer.say_lines(lines)

    def read(self, message=None) -> str:
        typed, self._typed = self._typed, ""
        self._prompting = True
        try:
            return self.input.read(message or self.prompt_text, typed)
        finally:
            self._prompting = False

    def prompt_text(self) -> str:
        """`› ` in the default mode; `plan › `, `accept-edits › `, `auto › ` say the others at every prompt."""
        mode = (self.runtime.config if self.start.done else self.config).mode
        return "› " if mode == "ask" else f"{mode} › "

    def ask(self, question: str) -> str:
        """One answer from the user (no history: answers are not commands); "" on Ctrl-C/Ctrl-D."""
        from prompt_toolkit import prompt

        try:
            return prompt(question)
        except (EOFError, KeyboardInterrupt):
            return ""

    def models(self) -> list[str]:
        """The model names the server lists; a Tab pressed right after the start waits for them."""
        from nanohermes.ui.endpoint import MODELS_WAIT_S

        if self.endpoint is None:
            return []
        self.endpoint.wait(MODELS_WAIT_S)
        return self.endpoint.models

    def workspace_files(self) -> tuple[str, ...]:
        """What `@` completes: the workspace's files, as the tools see them (.gitignore honoured)."""
        from nanohermes.workspace import list_workspace

        return list_workspace(self.config.workspace, exclude=self.config.home.resolve()).files

    def cycle_mode(self) -> None:
        self.runtime.switch(mode=next_mode(self.runtime.config.mode))

    def ask_form(self, question):
        """An MCP server's question, asked at the terminal (ui/mcp_commands.py)."""
        from nanohermes.ui.mcp_commands import ask_form

        return ask_form(self, question)

    def approve(self, tool, args: dict, preview: str):
        from nanohermes.ui.approval import ask, whole_preview
        from nanohermes.ui.pager import page

        agent = self.runtime.agent
        self.renderer.pause()
        self.keys_off(take=False)  # what is typed and queued waits on the input line, after the question
        self.notifier.waiting(f"approval needed: {action_title(tool.name, args)}")
        try:
            scope = agent.approvals.scope(tool, args, agent.ctx)
            whole = whole_preview(tool, args, agent.ctx)
            decision = ask(
                self.show, tool.name, args, preview, scope, whole, lambda lines: page(self.console, self.show, lines)
            )
        finally:
            self.notifier.seen()
            self.keys_on()
            self.renderer.resume()
        call_id = self.renderer.running
        if decision.answer == "no" and call_id:
            self.renderer.declined[call_id] = decision.reason
        elif tool.name in WRITING_TOOLS and call_id:
            self.renderer.previewed.add(call_id)
        return decision

    def keys_on(self) -> None:
        """The keyboard to ui/keys.py while a turn (or a `!command`) runs; its input line shows."""
        if self.keys is not None:
            self.keys.start()
            self.renderer.area.show_input(self.keys.snapshot)

    def keys_off(self, take: bool = True) -> None:
        """Give the keyboard back; `take`: what was typed starts the next prompt, what was queued is sent next."""
        if self.keys is not None:
            self.keys.stop()
            if take:
                self._typed += self.keys.take_typed()
                self.queued += self.keys.take_queued()

    def say_session(self) -> None:
        """Which session this is; for a resumed one, what it was about."""
        from nanohermes.ui.recap import recap_lines, workspace_note

        s, config = self.runtime.session, self.runtime.config
        resumed = f"resumed, {s.state.total_messages} messages" if s.state.total_messages else "new"  # as listed
        self.say(f"session {s.name} ({resumed}) · /help for commands")
        note = workspace_note(s.state.workspace, config.workspace) if s.state.total_messages else ""
        for line in [*recap_lines(s.state.messages), *([note] if note else [])]:
            self.say(line)

    def report_endpoint(self) -> None:
        """Say once, as soon as it is known, that the endpoint is unusable: above the prompt
        when it arrives during one (the check's thread), else before the next prompt."""
        from nanohermes.ui.endpoint import EndpointCheck

        if self.endpoint is None:
            self.endpoint = EndpointCheck(
                self.config, on_done=lambda: self._prompting and self.report_endpoint(), start_after=self._drawn
            )
            return
        problem = self.endpoint.take_problem()
        if problem:
            self.say(f"· endpoint check: {problem}", "yellow")

    def loop(self) -> int:
        while True:
            self.report_endpoint()
            try:
                line = self.next_line()
            except KeyboardInterrupt:  # Ctrl-C at the prompt clears the line; twice on an empty one leaves
                if self.input.empty_interrupt and self._second_ctrl_c():
                    return 0
                continue
            except EOFError:
                return 0
            if not self.handle(line):
                return 0

    def next_line(self) -> str:
        """A message queued (during the last turn, or typed ahead with Enter before this prompt),
        echoed as if typed; else the prompt's next line, starting with what was typed ahead."""
        if self.keys is None:
            return self._queued_line() or self.read()
        with self.keys.typed_ahead():
            self.keys_off()
            return self._queued_line() or self.read()

    def _queued_line(self) -> str:
        if not self.queued:
            return ""
        line = self.queued.pop(0)
        self.say(self.prompt_text() + line)
        return line

    def _second_ctrl_c(self) -> bool:
        now = time.monotonic()
        if now - self._last_ctrl_c <= DOUBLE_CTRL_C_S:
            return True
        self._last_ctrl_c = now
        self.say(CTRL_C_HINT, "dim")
        return False

    def handle(self, line: str) -> bool:
        """Do what `line` asks; False to leave."""
        if not line.strip():
            return True
        if line.strip().lower() in LEAVE_WORDS:
            return False
        try:
            if line.startswith("/") and not line.startswith("//"):
                return self.command(line)
            if line.startswith("!"):
                self.shell_escape(line[1:])
            else:
                self.message(line)
        except KeyboardInterrupt:  # landed between the loop's own handlers (e.g. Esc as a turn ended)
            self.keys_off()
            self.renderer.end_turn(interrupted=True)
            self.say("· interrupted", "yellow")
        return True

    def command(self, line: str) -> bool:
        from nanohermes.ui.commands import run_slash_command

        try:
            return run_slash_command(self, line)
        except KeyboardInterrupt:  # e.g. /compact waiting on the summariser
            self.say("· command interrupted", "yellow")
        except NanoHermesError as exc:
            self.say(f"error: {exc}", "red")
        finally:
            self.renderer.end_turn()
        return True

    def shell_escape(self, command: str) -> None:
        from nanohermes.ui.shell_escape import context_block, run_shell_escape

        text = run_shell_escape(self, command)
        if text is not None:
            self.context_for_model.append(context_block(text))

    def message(self, line: str) -> None:
        """Send `line`, unless an @path in it names nothing: then say so once, and give it back to edit."""
        from nanohermes.prompt.mentions import missing_mentions

        missing = missing_mentions(line, self.runtime.agent.ctx)
        if missing and line != self._held_back:
            self._held_back, self._typed = line, line
            self.say(
                f"· not sent: {', '.join(missing)} names no file or directory of the workspace "
                "(Tab completes paths); edit the message, or press Enter to send it as it is",
                "yellow",
            )
            return
        self._held_back = ""
        self.turn(line)

    def turn(self, text: str, mentions=None) -> None:
        """One turn of `text`; `mentions`: where files may be named (prompt/mentions.py), when not all
        of it is the user's words (a command file's prompt)."""
        started = time.monotonic()
        self.notifier.seen()
        context, self.context_for_model = "\n\n".join(self.context_for_model), []
        self.keys_on()
        try:
            result = self.runtime.agent.run_turn(text, context, mentions)
        except NanoHermesError as exc:  # provider, session (disk full), config
            self.renderer.end_turn()
            self.say(f"error: {exc}", "red")
            return
        finally:
            self.keys_off()
        interrupted = result.stopped_reason == "interrupted"
        self.renderer.end_turn(interrupted=interrupted)
        if interrupted:
            self.say("· interrupted", "yellow")
            self._unqueue()
        elif result.stopped_reason:
            from nanohermes.stops import stop_message

            self.say(f"· {stop_message(result)}", "yellow")
        self._status_line(result.usage, time.monotonic() - started)
        self.notifier.waiting("stopped: " + result.stop_code if result.stop_code else "the turn is done")
        if self.runtime.config.mode == "plan" and not result.stopped_reason and result.final_text.strip():
            self._offer_plan()

    def _offer_plan(self) -> None:
        """After a plan: approve it and go on in a mode that acts, or keep planning (Enter)."""
        answer = self.ask(PLAN_QUESTION).strip().lower()
        mode = PLAN_ANSWERS.get(answer)
        if mode is None:
            return
        self.runtime.switch(mode=mode)
        self.say(f"· mode: {mode}", "dim")
        self.say(self.prompt_text() + PLAN_APPROVED)
        self.turn(PLAN_APPROVED)

    def _unqueue(self) -> None:
        """A stopped turn sends nothing after it: what was queued comes back to the prompt, to edit."""
        if self.queued:
            self.say(f"· {len(self.queued)} queued message(s) not sent: back at the prompt to edit or send", "dim")
            self._typed = "\n".join([*self.queued, *([self._typed] if self._typed else [])])
            self.queued = []

    def _status_line(self, usage, seconds: float) -> None:
        from nanohermes.ui.usage_view import turn_line

        agent = self.runtime.agent
        self.totals.add(usage)
        status = agent.context_status()
        share = None if status.window else status.chars / status.high_water_chars
        self.say(turn_line(usage, window=status.window, budget_share=share, seconds=seconds, totals=self.totals), "dim")


PLAN_QUESTION = "approve the plan and go on? [e] in accept-edits · [a] in ask · Enter: keep planning › "
PLAN_ANSWERS = {"e": "accept-edits", "accept-edits": "accept-edits", "a": "ask", "ask": "ask"}
PLAN_APPROVED = "The plan is approved: carry it out."  # sent as the user's own words (they chose it)


def run_repl(config: Config, session_name: str | None, trust_workspace: bool = False) -> int:
    import signal

    # An interactive loop must stop a turn on Ctrl-C even if it was started from a shell that
    # ignores SIGINT (background jobs, some CI runners), which Python would otherwise inherit.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    repl = Repl(config, session_name, trust_workspace)
    try:
        return repl.loop()
    finally:
        if repl.start.finished():  # a session that failed to build has nothing to close or resume
            repl.runtime.close()
            try:
                print(leaving_line(repl.runtime.session, repl.runtime.config.workspace), file=sys.stderr)
            except OSError:  # the terminal is gone (SIGHUP): the session is saved all the same
                pass


def leaving_line(session, workspace: Path) -> str:
    """What the REPL says on the way out: the command that resumes the session."""
    from nanohermes.ui.recap import resume_command

    if not session.saved:
        return f"session {session.name} was empty; nothing saved"
    here = " (or nanohermes -c)" if Path.cwd().resolve() == Path(workspace) else ""
    return f"session {session.name} saved · resume with: {resume_command(session.name, workspace, Path.cwd())}{here}"
