"""Test server: an MCP resource server behind the real authorization server in tests/peers/oidc-provider.mjs.

Built with the SDK's own auth support: without a valid bearer token every request gets 401 with
``WWW-Authenticate: Bearer …, resource_metadata=…``, and its protected resource metadata (RFC 9728) names the
authorization server given by ``--issuer``. Tokens are checked by introspection (RFC 7662) at that server, as the
client ``mcp-resource-server`` whose secret is in `KNIME_MCP_TEST_INTROSPECTION_SECRET`; a token must be active, for
this server (its ``aud``), and carry ``mcp:read``.

    python oidc_mcp_server.py --issuer http://127.0.0.1:PORT [--transport streamable-http|sse]

Prints `oidc MCP server listening on http://127.0.0.1:PORT/mcp` (or `/sse`).
"""

from __future__ import annotations

import argparse
import os
import sys

import httpx2
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

from knime_mcp.demo_server import HOST, serve_http_at

SECRET_ENV = "KNIME_MCP_TEST_INTROSPECTION_SECRET"
READ = "mcp:read"


class IntrospectingVerifier:
    """A TokenVerifier that asks the authorization server whether a token is active and for this server."""

    def __init__(self, issuer: str, resource: str, secret: str) -> None:
        self._endpoint = f"{issuer}/token/introspection"
        self._resource = resource
        self._auth = ("mcp-resource-server", secret)

    async def verify_token(self, token: str) -> AccessToken | None:
        async with httpx2.AsyncClient() as http:
            response = await http.post(self._endpoint, data={"token": token}, auth=self._auth)
        claims = response.json() if response.status_code == 200 else {}
        if not claims.get("active") or self._resource not in _audiences(claims.get("aud")):
            return None
        return AccessToken(
            token=token,
            client_id=claims.get("client_id", ""),
            scopes=claims.get("scope", "").split(),
            expires_at=claims.get("exp"),
            resource=self._resource,
        )


def _audiences(aud: object) -> list[str]:
    return aud if isinstance(aud, list) else [aud] if isinstance(aud, str) else []


def build_server(issuer: str, url: str, secret: str) -> MCPServer:
    auth = AuthSettings(issuer_url=issuer, resource_server_url=url, required_scopes=[READ])
    verifier = IntrospectingVerifier(issuer, url, secret)
    server = MCPServer("knime-mcp-oidc-test", log_level="WARNING", auth=auth, token_verifier=verifier)

    @server.tool()
    def echo(text: str) -> str:
        """Return the text it was given."""
        return text

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--transport", choices=("streamable-http", "sse"), default="streamable-http")
    args = parser.parse_args()
    secret = os.environ.get(SECRET_ENV)
    if not secret:
        sys.exit(f"set {SECRET_ENV}")
    path = "/mcp" if args.transport == "streamable-http" else "/sse"

    def app_for(url: str) -> object:
        server = build_server(args.issuer, url, secret)
        if args.transport == "sse":
            return server.sse_app(host=HOST)
        return server.streamable_http_app(host=HOST)

    serve_http_at(app_for, path, name="oidc MCP server")


if __name__ == "__main__":
    main()
