"""Language servers' diagnostics after write_file and edit_file: the problems a change introduced,
said at the end of its result (ToolContext.diagnostics; tools/diagnosed.py asks).

A server is the user's program ([lsp.LANGUAGE] in their config.toml, or pylsp found on PATH:
settings.py), started on the first change of a file of its language and ended with the session
(Runtime.close). It runs as sandbox/actors.py says for the user's command that reads the model's
work: read-only confined, unless the user set `sandbox = false`. Only problems that were not there
before the change are said (problems.py), errors unless `severity = "warning"`, at most ten.

Whatever the server does, the change stands and the call succeeds: a server that cannot start,
exits or breaks the protocol is one notice (the result's and the user's), and its language's
diagnostics are off for the session; one that does not answer within `timeout` is a line saying
the diagnostics did not come, and after three such checks in a row it is stopped too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from nanohermes.lsp.settings import ServerSettings, in_force
from nanohermes.tools.diagnosed import MADE

if TYPE_CHECKING:
    from nanohermes.lsp.server import LanguageServer
    from nanohermes.sandbox.policy import Policy

# The session builds Diagnostics whether or not a file is ever changed: what starts, speaks to and
# judges a server is imported on the first change of a file some server checks.

MAX_CHECKED_CHARS = 1_000_000  # a generated file this big is not worth a server's time on every edit (syntax.py's cut)
MAX_SLOW_CHECKS = 3  # checks in a row past the timeout: the server is stuck, and each costs an edit the timeout


class Diagnostics:
    """The session's language servers, one per language, each started when first needed."""

    def __init__(
        self,
        table: tuple[ServerSettings, ...] | None,
        workspace: Path,
        session: Policy | None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self._languages = in_force(table)
        self._workspace = workspace
        self._session = session  # the session's sandbox policy (None: level off)
        self._warn = warn or (lambda text: None)
        self._servers: dict[str, LanguageServer] = {}
        self._off: dict[str, str] = {}  # language → why its diagnostics are off this session
        self._lock = threading.Lock()  # a helper agent's edits go through the same servers

    def after_change(self, path: Path, shown: str, before: str | None, after: str) -> str:
        """What the result of a change to `path` ends with: the new problems, a notice, or ''.
        `before`: its text before the change (None: a new file); `after`: its text now."""
        settings = self._language_of(path)
        if settings is None or settings.language in self._off:
            return ""
        if max(len(before or ""), len(after)) > MAX_CHECKED_CHARS:
            return f"\n{MADE}; no diagnostics: {shown} is over {MAX_CHECKED_CHARS:,} characters"
        from nanohermes.lsp.connection import ServerGone, ServerSlow
        from nanohermes.lsp.problems import WARNING, new_problems, problems_note, problems_of
        from nanohermes.tools.files import printable

        with self._lock:
            server = self._servers.get(settings.language) or self._start(settings)
            if isinstance(server, str):
                return server
            deadline = time.monotonic() + settings.timeout
            try:
                old, now = server.check(path, None if before is None else printable(before), printable(after), deadline)
            except ServerGone as exc:
                self._end(settings)
                return self._turn_off(settings, f"{settings.label} stopped: {exc}")
            except ServerSlow:
                return self._slow(settings, server)
            server.slow = 0
        found = new_problems(before or "", problems_of(old), after, problems_of(now), settings.least_severity)
        return problems_note(shown, settings.label, found, warnings=settings.least_severity >= WARNING)

    def close(self) -> None:
        """End every server (shutdown and exit; killed if it does not)."""
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
        for server in servers:
            server.stop()

    def _language_of(self, path: Path) -> ServerSettings | None:
        if self._workspace not in path.parents:  # the server's root is the workspace
            return None
        suffix = path.suffix.lower()
        return next((s for s in self._languages if suffix in s.extensions), None)

    def _start(self, settings: ServerSettings) -> LanguageServer | str:
        """The language's server, started and initialized, or the note that it could not be."""
        from nanohermes.errors import ToolError
        from nanohermes.lsp.connection import ServerGone, ServerSlow
        from nanohermes.lsp.server import LanguageServer
        from nanohermes.lsp.settings import resolve_program
        from nanohermes.sandbox.actors import USER, command_policy, server_sandboxed

        argv, why = resolve_program(settings.command, self._workspace)
        if argv is None:
            # a default not installed is no news; a server the user named, or one found only in the workspace, is
            quiet = not why and not settings.configured
            return self._turn_off(settings, why or f"{settings.command[0]} is not on PATH", quiet=quiet)
        policy = command_policy(USER, self._session, sandbox=server_sandboxed(settings.sandbox), read_only=True)
        server = LanguageServer(settings, argv, self._workspace, policy)
        label, why = settings.label, ""
        try:
            server.start(time.monotonic() + settings.startup_timeout)
        except ServerSlow:
            why = f"{label} did not answer initialize in {settings.startup_timeout:g} s (startup_timeout)"
        except ServerGone as exc:
            why = f"{label} did not start: {exc}"
        except ToolError as exc:  # the sandbox cannot confine it here: not run (fail closed)
            why = f"{label} was not started: {exc} (sandbox = false in [lsp.{settings.language}] runs it unconfined)"
        except OSError as exc:
            why = f"{label} could not be started: {exc.strerror or exc}"
        except BaseException:  # Ctrl-C while it starts: it must not run on, owned by no one
            server.stop()
            raise
        if why:
            server.stop()
            return self._turn_off(settings, why)
        self._servers[settings.language] = server
        return server

    def _slow(self, settings: ServerSettings, server: LanguageServer) -> str:
        server.slow += 1
        if server.slow < MAX_SLOW_CHECKS:
            return f"\n{MADE}; diagnostics did not come in {settings.timeout:g} s ({settings.label}), so none are shown"
        self._end(settings)
        return self._turn_off(
            settings, f"{settings.label} did not answer {MAX_SLOW_CHECKS} checks in a row within {settings.timeout:g} s"
        )

    def _end(self, settings: ServerSettings) -> None:
        self._servers.pop(settings.language).stop()

    def _turn_off(self, settings: ServerSettings, why: str, quiet: bool = False) -> str:
        """Off for the session, said once (to the user and in this result) unless `quiet`."""
        self._off[settings.language] = why
        if quiet:
            return ""
        self._warn(f"diagnostics for {settings.language} files are off for this session: {why}")
        return f"\n{MADE}; no diagnostics: {why}; they are off for {settings.language} files this session"
