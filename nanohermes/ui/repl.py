"""The interactive loop: prompt_toolkit input, rich output, slash commands, approvals, and the
keyboard while a turn runs (Esc stops it, typed keys wait for the next prompt)."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from nanohermes.calls import WRITING_TOOLS
from nanohermes.config import MODES, Config
from nanohermes.errors import NanoHermesError
from nanohermes.stops import stop_message
from nanohermes.ui.commands import COMMANDS, run_slash_command
from nanohermes.ui.escape import neutralize
from nanohermes.ui.switch_commands import next_mode, session_names


def _key_bindings(cycle_mode):
    from prompt_toolkit.key_binding import KeyBindings

    kb = KeyBindings()

    @kb.add("escape", "enter")
    @kb.add("c-j")
    def _newline(event):
        event.current_buffer.insert_text("\n")

    @kb.add("s-tab")  # as in Claude Code: the mode changes from the next request
    def _cycle_mode(event):
        cycle_mode()

    return kb


class Repl:
    def __init__(self, config: Config, session_name: str | None):
        from rich.console import Console

        from nanohermes.runtime import build_runtime
        from nanohermes.ui.keys import KeyWatcher
        from nanohermes.ui.live import RichRenderer
        from nanohermes.ui.usage_view import SessionTotals

        self.endpoint = None  # started with the first prompt (ui/endpoint.py says why)
        self._prompting = False
        self._drawn = threading.Event()  # the first prompt is on the screen
        self.console = Console(highlight=False)
        self.renderer = RichRenderer(self.console)
        self.runtime = build_runtime(config, session_name, self.renderer, approve=self.approve)
        self.renderer.checkpoints = self.runtime.checkpoints
        self.keys = KeyWatcher() if KeyWatcher.available() else None
        self.totals = SessionTotals()
        self.notes_for_model: list[str] = []  # told to the model with the next message (e.g. after /undo)
        self._typed = ""  # keys typed while the last turn ran: the next prompt starts with them
        self._prompt = None

    def say(self, text: str, style: str = "") -> None:
        self.console.print(neutralize(text), markup=False, highlight=False, style=style or None)

    def show(self, lines) -> None:
        """Lines of (text, style) spans, as ui/toolview.py and ui/context_view.py build them."""
        self.renderer.say_lines(lines)

    def _prompt_session(self):
        if self._prompt is None:
            from prompt_toolkit import PromptSession
            from prompt_toolkit.history import FileHistory, InMemoryHistory

            from nanohermes.ui.completion import make_completer

            path = self.runtime.config.home / "history"
            try:
                path.touch(mode=0o600, exist_ok=True)
                history = FileHistory(str(path))
            except OSError:  # a read-only state directory: this run's history stays in memory
                history = InMemoryHistory()
            completer = make_completer(
                COMMANDS,
                {
                    "/model": self.models,
                    "/mode": lambda: MODES,
                    "/resume": lambda: session_names(self.runtime.config.home),
                },
            )
            self._prompt = PromptSession(
                history=history,
                completer=completer,
                key_bindings=_key_bindings(self.cycle_mode),
                multiline=False,
                complete_while_typing=False,
            )
            self._prompt.app.after_render += lambda app: self._drawn.set()
        return self._prompt

    def read(self, message=None) -> str:
        from prompt_toolkit.patch_stdout import patch_stdout

        session = self._prompt_session()
        typed, self._typed = self._typed, ""
        with patch_stdout(raw=True):  # what another thread prints appears above the prompt
            self._prompting = True
            try:
                return session.prompt(message or self.prompt_text, default=typed)
            finally:
                self._prompting = False

    def prompt_text(self) -> str:
        """`› ` in the default mode; `plan › `, `accept-edits › `, `auto › ` say the others at every prompt."""
        mode = self.runtime.config.mode
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

    def cycle_mode(self) -> None:
        self.runtime.switch(mode=next_mode(self.runtime.config.mode))

    def open_session(self, name: str) -> None:
        """/resume: continue session `name`; the current one stays saved."""
        from nanohermes.runtime import build_runtime

        if name == self.runtime.session.name:
            self.say(f"already in session {name}")
            return
        runtime = build_runtime(self.runtime.config, name, self.renderer, approve=self.approve)
        old, self.runtime = self.runtime, runtime
        self.renderer.checkpoints = runtime.checkpoints
        old.close()
        self.say_session()

    def approve(self, tool, args: dict, preview: str):
        from nanohermes.ui.approval import ask

        agent = self.runtime.agent
        self.renderer.pause()
        self._keys_off()
        try:
            decision = ask(self.show, tool.name, args, preview, agent.approvals.scope(tool, args, agent.ctx))
        finally:
            self._keys_on()
            self.renderer.resume()
        call_id = self.renderer.running
        if decision.answer == "no" and call_id:
            self.renderer.declined[call_id] = decision.reason
        elif tool.name in WRITING_TOOLS and call_id:
            self.renderer.previewed.add(call_id)
        return decision

    def _keys_on(self) -> None:
        if self.keys is not None:
            self.keys.start()

    def _keys_off(self) -> None:
        """Give the keyboard back; what was typed meanwhile starts the next prompt."""
        if self.keys is not None:
            self.keys.stop()
            self._typed += self.keys.take_typed()

    def say_session(self) -> None:
        """Which session this is; for a resumed one, what it was about."""
        from nanohermes.ui.recap import recap_lines, workspace_note

        s, config = self.runtime.session, self.runtime.config
        resumed = f"resumed, {len(self.runtime.agent.messages) - 1} messages" if s.state.total_messages else "new"
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
                self.runtime.config, on_done=lambda: self._prompting and self.report_endpoint(), start_after=self._drawn
            )
            return
        problem = self.endpoint.take_problem()
        if problem:
            self.say(f"· endpoint check: {problem}", "yellow")

    def loop(self) -> int:
        config = self.runtime.config
        self.say(f"NanoHermes · {config.model} · {config.workspace} · mode {config.mode}")
        self.say(f"· sandbox: {self.runtime.sandbox_summary}", "dim")
        self.say_session()
        while True:
            self.report_endpoint()
            try:
                line = self.read()
            except KeyboardInterrupt:
                continue  # Ctrl-C at the prompt clears the line
            except EOFError:
                return 0
            if not line.strip():
                continue
            try:
                if line.startswith("/") and not line.startswith("//"):
                    if not self.command(line):
                        return 0
                else:
                    self.turn(line)
            except KeyboardInterrupt:  # landed between the loop's own handlers (e.g. Esc as a turn ended)
                self._keys_off()
                self.renderer.end_turn(interrupted=True)
                self.say("· interrupted", "yellow")

    def command(self, line: str) -> bool:
        try:
            return run_slash_command(self, line)
        except KeyboardInterrupt:  # e.g. /compact waiting on the summariser
            self.say("· command interrupted", "yellow")
        except NanoHermesError as exc:
            self.say(f"error: {exc}", "red")
        finally:
            self.renderer.end_turn()
        return True

    def turn(self, text: str) -> None:
        started = time.monotonic()
        if self.notes_for_model:
            text = "\n".join(f"[{note}]" for note in self.notes_for_model) + "\n\n" + text
            self.notes_for_model = []
        self._keys_on()
        try:
            result = self.runtime.agent.run_turn(text)
        except NanoHermesError as exc:  # provider, session (disk full), config
            self.renderer.end_turn()
            self.say(f"error: {exc}", "red")
            return
        finally:
            self._keys_off()
        self.renderer.end_turn(interrupted=result.stopped_reason == "interrupted")
        if result.stopped_reason == "interrupted":
            self.say("· interrupted", "yellow")
        elif result.stopped_reason:
            self.say(f"· {stop_message(result)}", "yellow")
        self._status_line(result.usage, time.monotonic() - started)

    def _status_line(self, usage, seconds: float) -> None:
        from nanohermes.ui.usage_view import turn_line

        agent = self.runtime.agent
        self.totals.add(usage)
        status = agent.context_status()
        share = None if status.window else status.chars / status.high_water_chars
        self.say(turn_line(usage, window=status.window, budget_share=share, seconds=seconds, totals=self.totals), "dim")


def run_repl(config: Config, session_name: str | None) -> int:
    import signal

    # An interactive loop must stop a turn on Ctrl-C even if it was started from a shell that
    # ignores SIGINT (background jobs, some CI runners), which Python would otherwise inherit.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    repl = Repl(config, session_name)
    try:
        return repl.loop()
    finally:
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
