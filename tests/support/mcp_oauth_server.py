"""An MCP server over streamable HTTP that demands OAuth, for the tests: the SDK's MCPServer with
its own authorization server (dynamic registration, PKCE), whose `authorize` approves at once
(the "browser" is a GET that follows the redirect). The login's access token lasts ACCESS_TOKEN_S, so a
second session must refresh; refreshed ones last long, so a slow machine cannot see them expire mid-test.

    python tests/support/mcp_oauth_server.py PORT
"""

from __future__ import annotations

import math
import secrets
import sys
import time

from mcp.server.auth.provider import AccessToken, AuthorizationCode, RefreshToken, construct_redirect_uri
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthToken

ACCESS_TOKEN_S = 2  # short: a later session finds it expired and refreshes it
REFRESHED_TOKEN_S = 300


class ApprovingProvider:
    """An in-memory authorization server that approves every request."""

    def __init__(self):
        self.clients, self.codes, self.access, self.refresh = {}, {}, {}, {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client, params):
        code = AuthorizationCode(
            code=secrets.token_urlsafe(24),
            scopes=params.scopes or ["mcp"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        self.codes[code.code] = code
        return construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client, authorization_code):
        self.codes.pop(authorization_code.code, None)
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource, ACCESS_TOKEN_S)

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        self.refresh.pop(refresh_token.token, None)
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource, REFRESHED_TOKEN_S)

    async def load_access_token(self, token):
        found = self.access.get(token)
        return found if found and (found.expires_at or 0) > time.time() else None

    async def revoke_token(self, token):
        self.access.pop(getattr(token, "token", ""), None)

    def _issue(self, client_id, scopes, resource, lasts):
        access, refresh = f"at-{secrets.token_hex(12)}", f"rt-{secrets.token_hex(12)}"
        expires = math.ceil(time.time() + lasts)  # at least `lasts` s: int() could leave a few milliseconds
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, expires_in=lasts, refresh_token=refresh, scope=" ".join(scopes))


def oauth_server(port: int) -> MCPServer:
    base = f"http://127.0.0.1:{port}"
    auth = AuthSettings(
        issuer_url=base,
        resource_server_url=f"{base}/mcp",
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["mcp"]),
        required_scopes=["mcp"],
        validate_token_resource=False,
    )
    app = MCPServer("guarded", auth_server_provider=ApprovingProvider(), auth=auth)

    @app.tool()
    def secret_plan() -> str:
        """What only a logged-in client may read."""
        return "the plan: ship on Friday"

    return app


if __name__ == "__main__":
    port = int(sys.argv[1])
    oauth_server(port).run("streamable-http", host="127.0.0.1", port=port)
