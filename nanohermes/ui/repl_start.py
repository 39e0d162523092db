"""The REPL's start: its first prompt is drawn before a new session is built.

Building a session — the runtime (the loop, the tools, the context engine), rich, every slash
command's module — costs ~300 ms of CPU, and the prompt needs none of it. So for a new session
the build runs on a thread once the first prompt is on the screen, while the user types; its
start lines (the header, the sandbox, the session, any warning) print above the prompt when it
is done, and a line entered before that waits for it. A resumed session is built before the
prompt (its recap comes first), and so is one whose workspace has hooks the user may be asked to
trust (the question needs the terminal).

A build that fails ends the prompt with its error, as a failure before the prompt did.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping


class Start:
    def __init__(self, repl, session_name: str | None, trust_workspace: bool):
        self.repl, self.session_name, self.trust_workspace = repl, session_name, trust_workspace
        self.config = repl.config
        self.done = False  # built, and its start lines said
        self._ended = threading.Event()
        self._error: BaseException | None = None
        self._builder: int | None = None  # the thread building
        self._go = threading.Event()

    def deferred(self) -> bool:
        """Whether the build may wait for the first prompt: a new session, no question to ask."""
        hooks = self.config.hooks
        asks = hooks is not None and bool(hooks.project) and not self.trust_workspace
        return self.session_name is None and not asks

    def begin(self) -> None:
        """Build now, or on a thread once told to go (the first prompt drawn, or asked for)."""
        self.config.resolved_api_key()  # no key: said at once, as before any prompt
        if not self.deferred():
            self._build()
            self.wait()
            return

        def later():
            self._go.wait()
            self._build()

        threading.Thread(target=later, name="nanohermes-start", daemon=True).start()

    def go(self) -> None:
        self._go.set()

    def wait(self) -> None:
        """Until the session is built (started now if it waits to be); what the build raised is raised here."""
        if self._builder == threading.get_ident() and not self._ended.is_set():
            raise AttributeError("asked for by the build itself before it made it")
        self.go()
        self._ended.wait()
        if self._error is not None:
            raise self._error

    def finished(self) -> bool:
        """Built without an error (waiting for a build under way)."""
        self.go()
        self._ended.wait()
        return self._error is None

    def _build(self) -> None:
        self._builder = threading.get_ident()
        try:
            build(self.repl, self.session_name, self.trust_workspace)
            say_start(self.repl)
            self.done = True
            self._ended.set()
        except BaseException as exc:  # said by the main thread, as a failure before the prompt is
            self._error = exc
            self._ended.set()
            self.repl.input.abort(exc)


def build(repl, session_name: str | None, trust_workspace: bool) -> None:
    """The REPL's session and what shows it: the runtime, the renderer, command files."""
    from rich.console import Console

    import nanohermes.ui.commands  # noqa: F401  (every built-in registered: a command file never takes one's name)
    from nanohermes.runtime import build_runtime
    from nanohermes.ui.custom_commands import CustomCommands
    from nanohermes.ui.hook_trust import trust_question
    from nanohermes.ui.live import RichRenderer
    from nanohermes.ui.theme import CODE_THEMES, rich_theme
    from nanohermes.ui.usage_view import SessionTotals

    config = repl.config
    repl.console = Console(highlight=False, theme=rich_theme(repl.theme))
    repl.renderer = RichRenderer(repl.console, code_theme=CODE_THEMES[repl.theme])
    repl.trust = (lambda hooks: True) if trust_workspace else trust_question(repl.say, repl.ask)
    repl.runtime = build_runtime(
        config, session_name, repl.renderer, approve=repl.approve, ask_user=repl.ask_form, trust=repl.trust
    )
    repl.renderer.checkpoints = repl.runtime.checkpoints
    repl.totals = SessionTotals()
    repl.custom = CustomCommands(config.home, config.workspace)  # command files: /review, /git:commit


def say_start(repl) -> None:
    """The lines before the first prompt (or above it, for a session built while it waits)."""
    from nanohermes.ui.sandbox_view import network_words, sandbox_line
    from nanohermes.ui.show_commands import resumed_calls

    runtime = repl.runtime
    config, width = runtime.config, repl.console.width
    with repl.console:  # one write: above a waiting prompt, the lines come as one block
        repl.say(header(config.model, shown_workspace(config.workspace), config.mode, width))
        line = sandbox_line(runtime.sandbox_backend, network_words(runtime.sandbox), config.mode, width)
        repl.say(f"· {line}", "dim" if runtime.sandbox_backend else "yellow")
        repl.say_session()
        for warning in repl.custom.warnings:
            repl.say(f"· {warning}", "yellow")
    repl.renderer.ran = resumed_calls(repl.runtime.agent.messages)


MIN_PATH_CHARS = 12  # a path cut shorter than this names nothing


def header(model: str, workspace: str, mode: str, width: int) -> str:
    """The first line, kept on one line: a long workspace path keeps its end (`…/proj/ws`)."""
    line = f"NanoHermes · {model} · {{}} · mode {mode}"
    room = width - 1 - len(line) + 2
    if len(workspace) > room:
        workspace = "…" + workspace[-max(room - 1, MIN_PATH_CHARS) :]
    return line.format(workspace)


def shown_workspace(path) -> str:
    """The workspace as a person writes it: ~ for the home directory."""
    from pathlib import Path

    home = Path.home()
    path = Path(path)
    return "~" + str(path)[len(str(home)) :] if path == home or home in path.parents else str(path)


class StartMenu(Mapping):
    """The slash menu (name -> what it does): empty until the session is built, then the built-in
    commands and the command files."""

    def __init__(self, start: Start):
        self.start = start
        self._menu: dict[str, str] | None = None

    def _entries(self) -> dict[str, str]:
        if not self.start.done:
            return {}
        if self._menu is None:
            from nanohermes.ui.commands import COMMANDS

            self._menu = {**{name: c.help for name, c in COMMANDS.items()}, **self.start.repl.custom.menu()}
        return self._menu

    def __getitem__(self, name: str) -> str:
        return self._entries()[name]

    def __iter__(self):
        return iter(self._entries())

    def __len__(self) -> int:
        return len(self._entries())
