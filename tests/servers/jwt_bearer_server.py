"""Test server: an MCP server, its authorization server taking the JWT bearer grant (RFC 7523), and an enterprise
identity provider that exchanges ID tokens for ID-JAGs (RFC 8693), all on one loopback port.

oidc-provider does not take JWT bearer grants, so this is the test's own authorization server, built on the SDK's
resource server pieces (protected resource metadata, ``WWW-Authenticate`` challenges, token verification):

- ``/mcp``: the MCP server; its protected resource metadata names this origin as the authorization server, and its
  tool ``whoami`` returns the subject of the assertion its token was granted for.
- ``/.well-known/oauth-authorization-server`` and ``/token``: the authorization server. A workload token (a JWT the
  "platform" signed with the key in ``KNIME_MCP_TEST_JWT_KEY``, audience this issuer, not expired) or an ID-JAG
  (``typ`` ``oauth-id-jag+jwt``, from the identity provider below, for the client ``knime-mcp-xaa`` whose secret is
  ``KNIME_MCP_TEST_CLIENT_SECRET``, sent by basic authentication) gets an access token; anything else
  ``invalid_grant`` or ``invalid_client``.
- ``/idp/token``: the identity provider's token exchange: an ID token (HS256 with the same key, audience
  ``knime-mcp-idp``) is exchanged for an ID-JAG for the audience and resource asked for.
- ``POST /revoke``: forgets every access token, as an administrator would; the next MCP request gets 401.

Every token request is printed as ``token request: <grant_type>`` (an assertion never is).

Prints `jwt bearer test server listening on http://127.0.0.1:PORT/mcp`.
"""

from __future__ import annotations

import base64
import hmac
import os
import secrets
import sys
import time
from typing import Any

import jwt
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from knime_mcp.demo_server import serve_http_at

KEY_ENV = "KNIME_MCP_TEST_JWT_KEY"
SECRET_ENV = "KNIME_MCP_TEST_CLIENT_SECRET"
AS_CLIENT = "knime-mcp-xaa"
IDP_CLIENT = "knime-mcp-idp"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"


def _refuse(error: str, description: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": error, "error_description": description}, status_code=status)


class _Tokens:
    """The access tokens granted, and for whom; a TokenVerifier of the SDK's."""

    def __init__(self) -> None:
        self.subjects: dict[str, str] = {}

    def grant(self, subject: str) -> JSONResponse:
        token = secrets.token_urlsafe(24)
        self.subjects[token] = subject
        return JSONResponse({"access_token": token, "token_type": "Bearer", "expires_in": 3600})

    async def verify_token(self, token: str) -> AccessToken | None:
        if token not in self.subjects:
            return None
        return AccessToken(token=token, client_id=AS_CLIENT, scopes=[])


def build_app(url: str, key: str, client_secret: str) -> Any:
    issuer = url.removesuffix("/mcp")
    tokens = _Tokens()
    auth = AuthSettings(issuer_url=issuer, resource_server_url=url, required_scopes=[])
    server = MCPServer("knime-mcp-jwt-bearer-test", log_level="WARNING", auth=auth, token_verifier=tokens)

    @server.tool()
    def whoami() -> str:
        """The subject of the assertion this session's token was granted for."""
        from mcp.server.auth.middleware.auth_context import get_access_token

        access = get_access_token()
        return tokens.subjects.get(access.token, "") if access else ""

    @server.custom_route("/.well-known/oauth-authorization-server", methods=["GET"])
    async def metadata(_: Request) -> Response:
        return JSONResponse(
            {
                "issuer": issuer,
                "authorization_endpoint": f"{issuer}/authorize",
                "token_endpoint": f"{issuer}/token",
                "grant_types_supported": [JWT_BEARER],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
                "response_types_supported": ["code"],
            }
        )

    @server.custom_route("/token", methods=["POST"])
    async def token(request: Request) -> Response:
        form = await request.form()
        print(f"token request: {form.get('grant_type')}", flush=True)
        if form.get("grant_type") != JWT_BEARER:
            return _refuse("unsupported_grant_type", "only the JWT bearer grant")
        assertion = str(form.get("assertion", ""))
        if jwt.get_unverified_header(assertion).get("typ") != "oauth-id-jag+jwt":
            try:
                claims = jwt.decode(assertion, key, algorithms=["HS256"], audience=issuer)
            except jwt.PyJWTError as exc:
                return _refuse("invalid_grant", f"workload token not accepted: {exc}")
            return tokens.grant(claims["sub"])
        client = _basic_client(request)
        if client is None or client[0] != AS_CLIENT or not hmac.compare_digest(client[1], client_secret):
            return _refuse("invalid_client", "client authentication failed", 401)
        try:
            claims = jwt.decode(assertion, key, algorithms=["HS256"], audience=issuer)
        except jwt.PyJWTError as exc:
            return _refuse("invalid_grant", f"ID-JAG not accepted: {exc}")
        if claims.get("client_id") != AS_CLIENT or claims.get("resource") != url:
            return _refuse("invalid_grant", "ID-JAG for another client or resource")
        return tokens.grant(claims["sub"])

    @server.custom_route("/idp/token", methods=["POST"])
    async def exchange(request: Request) -> Response:
        form = await request.form()
        print(f"token request: {form.get('grant_type')} at the identity provider", flush=True)
        wanted = {"grant_type": TOKEN_EXCHANGE, "requested_token_type": ID_JAG, "subject_token_type": ID_TOKEN}
        if any(form.get(name) != value for name, value in wanted.items()) or form.get("client_id") != IDP_CLIENT:
            return _refuse("invalid_request", "not an ID-JAG token exchange by a known client")
        if form.get("audience") != issuer or form.get("resource") != url:
            return _refuse("invalid_target", "no ID-JAG for that audience or resource")
        try:
            identity = jwt.decode(str(form.get("subject_token")), key, algorithms=["HS256"], audience=IDP_CLIENT)
        except jwt.PyJWTError as exc:
            return _refuse("invalid_grant", f"ID token not accepted: {exc}")
        claims = {
            "iss": f"{issuer}/idp",
            "sub": identity["sub"],
            "aud": issuer,
            "resource": url,
            "client_id": AS_CLIENT,
            "exp": int(time.time()) + 300,
        }
        id_jag = jwt.encode(claims, key, algorithm="HS256", headers={"typ": "oauth-id-jag+jwt"})
        return JSONResponse({"access_token": id_jag, "issued_token_type": ID_JAG, "token_type": "N_A"})

    @server.custom_route("/revoke", methods=["POST"])
    async def revoke(_: Request) -> Response:
        tokens.subjects.clear()
        return Response(status_code=204)

    return server.streamable_http_app()


def _basic_client(request: Request) -> tuple[str, str] | None:
    header = request.headers.get("authorization", "")
    if not header.startswith("Basic "):
        return None
    user, _, password = base64.b64decode(header[6:]).decode().partition(":")
    return user, password


def main() -> None:
    key, client_secret = os.environ.get(KEY_ENV), os.environ.get(SECRET_ENV)
    if not key or not client_secret:
        sys.exit(f"set {KEY_ENV} and {SECRET_ENV}")
    serve_http_at(lambda url: build_app(url, key, client_secret), "/mcp", name="jwt bearer test server")


if __name__ == "__main__":
    main()
