"""OAuth 2.1 for HTTP servers that say `oauth = true`, on the SDK's OAuthClientProvider.

`nanohermes mcp login NAME` runs the browser flow once: the client registers itself with the
server's authorization server (dynamic registration, a loopback redirect on a free port), the
user approves in the browser, the code comes back to 127.0.0.1 and is exchanged (PKCE). The
tokens and the registration are kept in `$NANOHERMES_HOME/mcp/oauth/NAME.json` (0600, in a 0700
directory, written atomically); a session uses them and the SDK refreshes them when they expire
(the new ones are written back). A session never opens a browser: a server that needs a login
fails with the command to run. Tokens are never printed or logged, and a server that echoes one
back has it redacted (settings.secrets).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from nanohermes.fileio import read_regular
from nanohermes.mcp.settings import MAX_TOKEN_FILE_BYTES, McpServerSettings, token_path

LOGIN_TIMEOUT_S = 300.0  # the user has five minutes to approve in the browser
CALLBACK_PAGE = b"<html><body>NanoHermes: logged in. You can close this tab.</body></html>"


class LoginNeeded(Exception):
    """The server wants an OAuth login, which only `nanohermes mcp login NAME` runs."""


class FileTokenStorage:
    """The SDK's TokenStorage in one 0600 JSON file per server."""

    def __init__(self, path: Path, fresh_registration: bool = False):
        self.path = path
        self.fresh_registration = fresh_registration  # a login registers anew (its redirect port is new)

    async def get_tokens(self):
        """The stored tokens, `expires_in` counted from now (kept as an absolute time)."""
        from mcp.shared.auth import OAuthToken

        tokens = _read(self.path).get("tokens")
        if not isinstance(tokens, dict):
            return None
        expires_at = tokens.pop("expires_at", None)
        if isinstance(expires_at, int | float):
            tokens["expires_in"] = int(expires_at - time.time())
        try:
            return OAuthToken.model_validate(tokens)
        except ValueError:
            return None

    async def set_tokens(self, tokens) -> None:
        data = tokens.model_dump(mode="json", exclude_none=True)
        if tokens.expires_in is not None:
            data["expires_at"] = time.time() + tokens.expires_in
        self._update("tokens", data)

    async def get_client_info(self):
        from mcp.shared.auth import OAuthClientInformationFull

        info = None if self.fresh_registration else _read(self.path).get("client")
        return OAuthClientInformationFull.model_validate(info) if isinstance(info, dict) else None

    async def set_client_info(self, client_info) -> None:
        self.fresh_registration = False
        self._update("client", client_info.model_dump(mode="json", exclude_none=True))

    def _update(self, key: str, value: dict) -> None:
        data = _read(self.path)
        data[key] = value
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, self.path)


def _read(path: Path) -> dict:
    try:
        data = json.loads(read_regular(path, MAX_TOKEN_FILE_BYTES).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def client_auth(settings: McpServerSettings, home: Path, browser: Callable[[str], None] | None = None):
    """The httpx2 Auth that logs in to `settings`' server. `browser` opens the authorization URL
    (a login); None: a session, which uses the stored tokens and fails with LoginNeeded without."""
    from mcp.shared.auth import OAuthClientMetadata

    from nanohermes.mcp.transport import expand

    port = _free_port() if browser is not None else 0
    redirect = f"http://127.0.0.1:{port}/callback"
    metadata = OAuthClientMetadata(
        client_name="NanoHermes",
        redirect_uris=[redirect],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    storage = FileTokenStorage(token_path(home, settings.name), fresh_registration=browser is not None)
    if browser is None:

        async def redirect_handler(url: str) -> None:
            raise LoginNeeded(f"it needs an OAuth login: run `nanohermes mcp login {settings.name}`")

        async def callback_handler():
            raise LoginNeeded(f"it needs an OAuth login: run `nanohermes mcp login {settings.name}`")
    else:
        callback = _Callback(port)

        async def redirect_handler(url: str) -> None:
            await callback.listen()
            browser(url)

        callback_handler = callback.wait
    return _provider(expand(settings.url or "", "url"), metadata, storage, redirect_handler, callback_handler)


def _provider_class():
    from mcp.client.auth import OAuthClientProvider

    class Provider(OAuthClientProvider):
        """The SDK's provider, told when stored tokens expire: it learns an expiry only from a
        token response, so tokens read back in a later session looked valid until the server
        answered 401, which starts a whole login instead of a refresh."""

        async def _initialize(self) -> None:
            await super()._initialize()
            tokens = self.context.current_tokens
            if tokens is not None and tokens.expires_in is not None:
                self.context.update_token_expiry(tokens)

    return Provider


def _provider(*args):  # the SDK is imported on first use
    return _provider_class()(*args)


class _Callback:
    """The loopback redirect: one GET to /callback with the code and state, answered with a page."""

    def __init__(self, port: int):
        self.port = port
        self.server: asyncio.AbstractServer | None = None
        self.result: asyncio.Future | None = None

    async def listen(self) -> None:
        self.result = asyncio.get_running_loop().create_future()
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def wait(self):
        from mcp.shared.auth import AuthorizationCodeResult

        try:
            query = await asyncio.wait_for(self.result, LOGIN_TIMEOUT_S)
        finally:
            self.server.close()
        if "error" in query:
            raise LoginNeeded(f"the authorization server refused: {query['error'][:200]}")
        return AuthorizationCodeResult(code=query.get("code", ""), state=query.get("state"), iss=query.get("iss"))

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            parts = urlsplit(line.split(" ")[1] if line.count(" ") >= 2 else "/")
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n"
            writer.write(head + f"Content-Length: {len(CALLBACK_PAGE)}\r\n\r\n".encode() + CALLBACK_PAGE)
            await writer.drain()
            if parts.path == "/callback" and ("code" in query or "error" in query) and not self.result.done():
                self.result.set_result(query)
        except (OSError, TimeoutError, IndexError):
            pass
        finally:
            writer.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
