"""The interactive loop: prompt_toolkit input, rich output, slash commands, approvals."""

from __future__ import annotations

import sys
import threading

from pathlib import Path

from nanohermes.config import MODES, Config
from nanohermes.errors import NanoHermesError
from nanohermes.ui.commands import COMMANDS, run_slash_command
from nanohermes.ui.escape import escape
from nanohermes.ui.plain import stop_message
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
        from nanohermes.ui.live import RichRenderer

        self.endpoint = None  # started with the first prompt (ui/endpoint.py says why)
        self._prompting = False
        self._drawn = threading.Event()  # the first prompt is on the screen
        self.console = Console(highlight=False)
        self.renderer = RichRenderer(self.console)
        self.runtime = build_runtime(config, session_name, self.renderer, approve=self.approve)
        self._prompt = None

    def say(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False)

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
            completer = make_completer(COMMANDS, {"/model": self.models, "/mode": lambda: MODES,
                                                  "/resume": lambda: session_names(self.runtime.config.home)})
            self._prompt = PromptSession(history=history, completer=completer,
                                         key_bindings=_key_bindings(self.cycle_mode), multiline=False, complete_while_typing=False)
            self._prompt.app.after_render += lambda app: self._drawn.set()
        return self._prompt

    def read(self, message=None) -> str:
        from prompt_toolkit.patch_stdout import patch_stdout

        session = self._prompt_session()
        with patch_stdout(raw=True):  # what another thread prints appears above the prompt
            self._prompting = True
            try:
                return session.prompt(message or self.prompt_text)
            finally:
                self._prompting = False

    def prompt_text(self) -> str:
        """`› ` in the default mode; `plan › ` / `auto › ` say the other modes at every prompt."""
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
        old.close()
        self.say_session()

    def approve(self, tool, args: dict, preview: str) -> str:
        self.renderer.end_stream()
        self.console.print(f"[yellow]{tool.name} wants to run:[/]")
        self.say(preview)
        while True:
            try:
                from prompt_toolkit import prompt  # no history: answers are not commands

                answer = prompt("allow? [y]es / [n]o / [a]lways for this session: ").strip().lower()
            except (EOFError, KeyboardInterrupt):
                return "no"
            if answer in ("y", "yes", "n", "no", "a", "always"):
                return {"y": "yes", "n": "no", "a": "always"}.get(answer, answer)

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
            self.endpoint = EndpointCheck(self.runtime.config, on_done=lambda: self._prompting and self.report_endpoint(),
                                          start_after=self._drawn)
            return
        problem = self.endpoint.take_problem()
        if problem:
            self.console.print(f"[yellow]· endpoint check: {escape(problem)}[/]", highlight=False)

    def loop(self) -> int:
        self.say(f"NanoHermes · {self.runtime.config.model} · {self.runtime.config.workspace} · mode {self.runtime.config.mode}")
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
            if line.startswith("/") and not line.startswith("//"):
                try:
                    if not run_slash_command(self, line):
                        return 0
                except KeyboardInterrupt:  # e.g. /compact waiting on the summariser
                    self.console.print("[yellow]· command interrupted[/]")
                except NanoHermesError as exc:
                    self.console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
                continue
            self.turn(line)

    def turn(self, text: str) -> None:
        try:
            result = self.runtime.agent.run_turn(text)
        except NanoHermesError as exc:  # provider, session (disk full), config
            self.renderer.end_stream()
            self.console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
            return
        self.renderer.end_stream()
        if result.stopped_reason == "interrupted":
            self.console.print("[yellow]· interrupted[/]")
        elif result.stopped_reason:
            self.console.print(f"[yellow]· {escape(stop_message(result))}[/]", highlight=False)
        if result.usage:
            from nanohermes import events as ev

            self.renderer(ev.Usage(**vars(result.usage)))


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
