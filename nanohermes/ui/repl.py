"""The interactive loop: prompt_toolkit input, rich output, slash commands, approvals, and the
keyboard while a turn runs (Esc stops it, typed keys wait for the next prompt)."""

from __future__ import annotations

import sys
import time

from nanohermes.calls import WRITING_TOOLS
from nanohermes.config import Config
from nanohermes.errors import NanoHermesError
from nanohermes.ui.commands import COMMANDS, run_slash_command
from nanohermes.ui.escape import neutralize
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
        from nanohermes.ui.keys import KeyWatcher
        from nanohermes.ui.live import RichRenderer
        from nanohermes.ui.usage_view import SessionTotals

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
            from prompt_toolkit.completion import WordCompleter
            from prompt_toolkit.history import FileHistory

            history = self.runtime.config.home / "history"
            history.touch(mode=0o600, exist_ok=True)
            completer = WordCompleter(list(COMMANDS), sentence=True, pattern=None)
            self._prompt = PromptSession(history=FileHistory(str(history)), completer=completer,
                                         key_bindings=_key_bindings(), multiline=False, complete_while_typing=False)
        return self._prompt

    def read(self, message: str = "› ") -> str:
        typed, self._typed = self._typed, ""
        return self._prompt_session().prompt(message, default=typed)

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
        share = None if agent.window else agent.keeper.engine.size(agent.messages) / agent.settings.high_water_chars
        self.say(turn_line(usage, window=agent.window, budget_share=share, seconds=seconds, totals=self.totals), "dim")


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
