"""Test server: an MCP resource server behind the real authorization server in tests/peers/oidc-provider.mjs.

Built with the SDK's own auth support: without a valid bearer token every request gets 401 with
``WWW-Authenticate: Bearer …, resource_metadata=…``, and its protected resource metadata (RFC 9728) names the
authorization server given by ``--issuer``. Tokens are checked by introspection (RFC 7662) at that server, as the
client ``mcp-resource-server`` whose secret is in `KNIME_MCP_TEST_INTROSPECTION_SECRET`; a token must be active, for
this server (its ``aud``), and carry ``mcp:read``. Calling a tool that writes needs ``mcp:write`` as well: without it
the call gets 403 ``insufficient_scope`` naming the scopes it needs, so that the client asks for them (step-up), as
the MCP authorization specification describes; ``purge`` is a misconfigured tool whose challenge names
``mcp:write`` but which checks a scope nobody can be granted.

    python oidc_mcp_server.py --issuer http://127.0.0.1:PORT [--transport streamable-http|sse]

Prints `oidc MCP server listening on http://127.0.0.1:PORT/mcp` (or `/sse`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping

import httpx2
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from pydantic import AnyHttpUrl
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from knime_mcp.demo_server import HOST, serve_http_at

SECRET_ENV = "KNIME_MCP_TEST_INTROSPECTION_SECRET"
READ = "mcp:read"
WRITE = "mcp:write"
WRITE_TOOLS = {"add_note": {WRITE}, "purge": {"mcp:admin"}}
"""The scopes each writing tool checks; its 403 always asks for ``mcp:read mcp:write``."""


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


class ScopePerTool:
    """403 ``insufficient_scope`` for a call of a writing tool whose token lacks the tool's scopes; the SDK's own
    middleware checks one set of scopes for every request."""

    def __init__(self, app: ASGIApp, verifier: IntrospectingVerifier, resource_metadata_url: str) -> None:
        self._app, self._verifier, self._metadata = app, verifier, resource_metadata_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self._app(scope, receive, send)
            return
        received: list[Message] = [await receive()]
        while received[-1].get("more_body"):
            received.append(await receive())
        needed = _scopes_needed(b"".join(message.get("body", b"") for message in received))
        if needed and not needed <= await self._granted(scope["headers"]):
            await self._insufficient_scope(send)
            return

        async def replay() -> Message:
            return received.pop(0) if received else await receive()

        await self._app(scope, replay, send)

    async def _granted(self, headers: list[tuple[bytes, bytes]]) -> set[str]:
        authorization = dict(headers).get(b"authorization", b"").decode()
        token = await self._verifier.verify_token(authorization.removeprefix("Bearer "))
        return set(token.scopes) if token else set()

    async def _insufficient_scope(self, send: Send) -> None:
        challenge = f'Bearer error="insufficient_scope", scope="{READ} {WRITE}", resource_metadata="{self._metadata}"'
        await send(
            {"type": "http.response.start", "status": 403, "headers": [(b"www-authenticate", challenge.encode())]}
        )
        await send({"type": "http.response.body", "body": b""})


def _scopes_needed(body: bytes) -> set[str]:
    try:
        message = json.loads(body)
    except ValueError:
        return set()
    if not isinstance(message, Mapping) or message.get("method") != "tools/call":
        return set()
    params = message.get("params")
    return WRITE_TOOLS.get(params.get("name"), set()) if isinstance(params, Mapping) else set()


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

    notes: list[str] = []

    @server.tool()
    def add_note(text: str) -> list[str]:
        """Keep a note (needs the scope mcp:write); returns the notes kept."""
        notes.append(text)
        return notes

    @server.tool()
    def purge() -> list[str]:
        """Forget every note (needs a scope nobody is granted)."""
        notes.clear()
        return notes

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
        app = server.sse_app(host=HOST) if args.transport == "sse" else server.streamable_http_app(host=HOST)
        metadata = str(build_resource_metadata_url(AnyHttpUrl(url)))
        return ScopePerTool(app, IntrospectingVerifier(args.issuer, url, secret), metadata)

    serve_http_at(app_for, path, name="oidc MCP server")


if __name__ == "__main__":
    main()
