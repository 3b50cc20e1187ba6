"""Test server: an OAuth-protected MCP resource server over Streamable HTTP, built with the SDK's own auth support.

Without a valid bearer token every request gets 401 with ``WWW-Authenticate: Bearer error="invalid_token", …,
resource_metadata="…/.well-known/oauth-protected-resource/mcp"``, as MCP's authorization spec says; the protected
resource metadata names the authorization server. Only the token in `KNIME_MCP_TEST_TOKEN` is valid (no real
authorization server runs: the token verifier just compares).

Prints `oauth test server listening on http://127.0.0.1:PORT/mcp`.
"""

from __future__ import annotations

import hmac
import os
import sys

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

from knime_mcp.demo_server import HOST, serve_http

TOKEN_ENV = "KNIME_MCP_TEST_TOKEN"
ISSUER = "https://auth.example.com"
"""The authorization server the metadata names; never contacted."""


class _OneToken:
    """A TokenVerifier accepting one token."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.encode(), self._token.encode()):
            return None
        return AccessToken(token=token, client_id="knime-mcp-test", scopes=["mcp"])


def build_server(token: str) -> MCPServer:
    auth = AuthSettings(
        issuer_url=ISSUER,
        resource_server_url=f"http://{HOST}/mcp",
        required_scopes=["mcp"],
        validate_token_resource=False,
    )
    server = MCPServer("knime-mcp-oauth-test", log_level="WARNING", auth=auth, token_verifier=_OneToken(token))

    @server.tool()
    def echo(text: str) -> str:
        """Return the text it was given."""
        return text

    return server


def main() -> None:
    token = os.environ.get(TOKEN_ENV)
    if not token:
        sys.exit(f"set {TOKEN_ENV} to the token that clients must send")
    serve_http(build_server(token).streamable_http_app(host=HOST), "/mcp", name="oauth test server")


if __name__ == "__main__":
    main()
