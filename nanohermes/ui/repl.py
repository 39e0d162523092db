"""The interactive loop: prompt_toolkit input, rich output, slash commands, approvals."""

from __future__ import annotations

import sys

from nanohermes.config import Config
from nanohermes.errors import NanoHermesError
from nanohermes.ui.commands import COMMANDS, run_slash_command
from nanohermes.ui.escape import escape
from nanohermes.ui.plain import stop_message


def _key_bindings():
    from prompt_toolkit.key_binding import KeyBindings

    kb = KeyBindings()

    @kb.add("escape", "enter")
    @kb.add("c-j")
    def _newline(event):
        event.current_buffer.insert_text("\n")

    return kb


class Repl:
    def __init__(self, config: Config, session_name: str | None):
        from rich.console import Console

        from nanohermes.runtime import build_runtime
        from nanohermes.ui.live import RichRenderer

        self.console = Console(highlight=False)
        self.renderer = RichRenderer(self.console)
        self.runtime = build_runtime(config, session_name, self.renderer, approve=self.approve)
        self._prompt = None

    def say(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False)

    def _prompt_session(self):
        if self._prompt is None:
            from prompt_toolkit import PromptSession
            from prompt_toolkit.completion import WordCompleter
            from prompt_toolkit.history import FileHistory

            history = self.runtime.config.home / "history"
            history.touch(mode=0o600, exist_ok=True)
            completer = WordCompleter(list(COMMANDS), sentence=True, pattern=None)
            self._prompt = PromptSession(history=FileHistory(str(history)), completer=completer,
                                         key_bindings=_key_bindings(), multiline=False, complete_while_typing=False)
        return self._prompt

    def read(self, message: str = "› ") -> str:
        return self._prompt_session().prompt(message)

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

    def loop(self) -> int:
        s = self.runtime.session
        resumed = f"resumed, {len(self.runtime.agent.messages) - 1} messages" if s.state.messages else "new"
        self.say(f"NanoHermes · {self.runtime.config.model} · {self.runtime.config.workspace} · mode {self.runtime.config.mode}")
        self.say(f"session {s.name} ({resumed}); resume with --session {s.name} · /help for commands")
        while True:
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
        print(f"session saved: {repl.runtime.session.name}", file=sys.stderr)
