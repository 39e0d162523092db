"""One language server for a session: started, told each changed file's text, asked its diagnostics.

A check is two publications of one document: its text before the change (`didOpen`, or
`didChange` to it), then after (`didChange` and `didSave`). The first is skipped when the server
already holds that text and has said its diagnostics (the file's last check, unchanged since): so
only a file's first edit, or one after a command changed it, waits for both. Every text is sent
whole: the tools hold both texts, and a full sync is what every server accepts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nanohermes import __version__
from nanohermes.lsp.connection import Connection
from nanohermes.lsp.settings import ServerSettings
from nanohermes.sandbox.policy import Policy

CAPABILITIES = {  # what we read: pushed diagnostics, with the version they were made for
    "textDocument": {
        "synchronization": {"didSave": True, "dynamicRegistration": False},
        "publishDiagnostics": {"versionSupport": True, "relatedInformation": False},
    },
    "general": {"positionEncodings": ["utf-16"]},
}


@dataclass
class _Document:
    version: int
    text: str
    diagnostics: list | None = None  # what the server said for this version; None: not said yet


class LanguageServer:
    def __init__(self, settings: ServerSettings, argv: list[str], workspace: Path, policy: Policy | None) -> None:
        self.settings = settings
        self._argv, self._workspace, self._policy = argv, workspace, policy
        self._documents: dict[str, _Document] = {}
        self._connection: Connection | None = None
        self.slow = 0  # checks in a row that timed out

    def start(self, deadline: float) -> None:
        """Start it and shake hands (initialize, initialized): ServerGone, ServerSlow, ToolError (the
        sandbox cannot confine it here) or OSError (it cannot be started)."""
        folder = {"uri": self._workspace.as_uri(), "name": self._workspace.name or "/"}
        self._connection = Connection(self._argv, self._workspace, self._policy, [folder])
        params = {
            # null: no watching of our process id, which a sandbox's own pid namespace would make look dead
            "processId": None,
            "clientInfo": {"name": "nanohermes", "version": __version__},
            "rootUri": folder["uri"],
            "rootPath": str(self._workspace),
            "workspaceFolders": [folder],
            "capabilities": CAPABILITIES,
        }
        self._connection.request("initialize", params, deadline)
        self._connection.notify("initialized", {})

    def check(self, path: Path, before: str | None, after: str, deadline: float) -> tuple[list, list]:
        """(its diagnostics of `before`, of `after`): `before` None is a new file, with none."""
        uri = path.as_uri()
        known = self._documents.get(uri)
        if before is None:
            old = []
        elif known is not None and known.text == before and known.diagnostics is not None:
            old = known.diagnostics
        else:
            old = self._sync(uri, before, deadline)
        return old, self._sync(uri, after, deadline)

    def _sync(self, uri: str, text: str, deadline: float) -> list:
        connection = self._connection
        known = self._documents.get(uri)
        since = connection.serial
        if known is None:
            document = _Document(1, text)
            item = {"uri": uri, "languageId": self.settings.language, "version": 1, "text": text}
            connection.notify("textDocument/didOpen", {"textDocument": item})
        else:
            document = _Document(known.version + 1, text)
            versioned = {"uri": uri, "version": document.version}
            connection.notify("textDocument/didChange", {"textDocument": versioned, "contentChanges": [{"text": text}]})
            connection.notify("textDocument/didSave", {"textDocument": {"uri": uri}})  # the tool wrote it to disk
        self._documents[uri] = document  # sent: a late answer for an older version is not taken for it
        document.diagnostics = connection.diagnostics(uri, document.version, since, deadline)
        return document.diagnostics

    def stop(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
