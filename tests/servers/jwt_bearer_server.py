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

With ``--dpop`` the authorization server offers DPoP (RFC 9449, ES256 in its metadata): a token request with a valid
proof (``htm``/``htu`` the token endpoint) gets a token bound to the proof's key (``token_type: DPoP``), which the MCP
server then takes only as ``Authorization: DPoP`` with a valid proof (tests/servers/dpop_mcp_server.py's checks);
without a proof, a Bearer token as before. Each token issued is printed as ``token issued: DPoP|Bearer``, each MCP
request with a bound token as ``dpop accepted nonce=no``, each with a Bearer one as ``bearer presented``.

With ``--tls PEM`` the same app is also served over HTTPS under that certificate and key (a company identity
provider behind the company CA), on a second port printed first: `over TLS at https://127.0.0.1:PORT`.

Prints `jwt bearer test server listening on http://127.0.0.1:PORT/mcp`.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hmac
import os
import secrets
import signal
import sys
import time
from typing import Any

import jwt
from dpop_mcp_server import DPoPGate, thumbprint
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from knime_mcp.demo_server import HOST, listening_socket, serve_http_at

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
    """The access tokens granted, for whom and (DPoP-bound ones) to which key; a TokenVerifier of the SDK's."""

    def __init__(self) -> None:
        self.subjects: dict[str, str] = {}
        self.bound: dict[str, str] = {}
        """A bound token's key thumbprint (RFC 7638)."""

    def grant(self, subject: str, key: str | None = None) -> JSONResponse:
        token = secrets.token_urlsafe(24)
        self.subjects[token] = subject
        if key is not None:
            self.bound[token] = key
        token_type = "DPoP" if key is not None else "Bearer"
        print(f"token issued: {token_type}", flush=True)
        return JSONResponse({"access_token": token, "token_type": token_type, "expires_in": 3600})

    async def verify_token(self, token: str) -> AccessToken | None:
        if token not in self.subjects:
            return None
        return AccessToken(token=token, client_id=AS_CLIENT, scopes=[])


class _BoundTokenGate(DPoPGate):
    """dpop_mcp_server's resource server check for the tokens bound here; Bearer tokens pass as before."""

    def __init__(self, app: ASGIApp, tokens: _Tokens, *, issuer: str, url: str) -> None:
        super().__init__(app, issuer=issuer, url=url, secret="", nonce=False)
        self._tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", []))
        scheme, _, token = headers.get(b"authorization", b"").decode().partition(" ")
        unbound = scheme.lower() == "bearer" and token not in self._tokens.bound
        if unbound or scheme.lower() not in ("bearer", "dpop"):  # else: the token endpoint's Basic, say
            if unbound:
                print("bearer presented", flush=True)
            await self._app(scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    async def _introspect(self, token: str) -> dict[str, Any]:
        return {"cnf": {"jkt": self._tokens.bound.get(token)}}


def _proof_key(proof: str, token_endpoint: str) -> str | None:
    """The thumbprint of the key a token request's DPoP proof was signed with, if the proof is valid for it."""
    try:
        header = jwt.get_unverified_header(proof)
        claims = jwt.decode(proof, jwt.PyJWK(header["jwk"], "ES256").key, algorithms=["ES256"])
    except (jwt.PyJWTError, KeyError):
        return None
    if header.get("typ") != "dpop+jwt" or claims.get("htm") != "POST" or claims.get("htu") != token_endpoint:
        return None
    return thumbprint(header["jwk"])


def build_app(url: str, key: str, client_secret: str, *, dpop: bool = False) -> Any:
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
                **({"dpop_signing_alg_values_supported": ["ES256"]} if dpop else {}),
            }
        )

    @server.custom_route("/token", methods=["POST"])
    async def token(request: Request) -> Response:
        form = await request.form()
        print(f"token request: {form.get('grant_type')}", flush=True)
        if form.get("grant_type") != JWT_BEARER:
            return _refuse("unsupported_grant_type", "only the JWT bearer grant")
        assertion = str(form.get("assertion", ""))
        bound_to = None
        if dpop and (proof := request.headers.get("dpop")):
            if (bound_to := _proof_key(proof, f"{issuer}/token")) is None:
                return _refuse("invalid_dpop_proof", "the DPoP proof does not verify for this request")
        if jwt.get_unverified_header(assertion).get("typ") != "oauth-id-jag+jwt":
            try:
                claims = jwt.decode(assertion, key, algorithms=["HS256"], audience=issuer)
            except jwt.PyJWTError as exc:
                return _refuse("invalid_grant", f"workload token not accepted: {exc}")
            return tokens.grant(claims["sub"], bound_to)
        client = _basic_client(request)
        if client is None or client[0] != AS_CLIENT or not hmac.compare_digest(client[1], client_secret):
            return _refuse("invalid_client", "client authentication failed", 401)
        try:
            claims = jwt.decode(assertion, key, algorithms=["HS256"], audience=issuer)
        except jwt.PyJWTError as exc:
            return _refuse("invalid_grant", f"ID-JAG not accepted: {exc}")
        if claims.get("client_id") != AS_CLIENT or claims.get("resource") != url:
            return _refuse("invalid_grant", "ID-JAG for another client or resource")
        return tokens.grant(claims["sub"], bound_to)

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

    app = server.streamable_http_app()
    return _BoundTokenGate(app, tokens, issuer=issuer, url=url) if dpop else app


def _basic_client(request: Request) -> tuple[str, str] | None:
    header = request.headers.get("authorization", "")
    if not header.startswith("Basic "):
        return None
    user, _, password = base64.b64decode(header[6:]).decode().partition(":")
    return user, password


async def _serve_with_tls(app_for: Any, certificate: str) -> None:
    """The app on plain HTTP (its URL, the issuer's) and on HTTPS under ``certificate``, until SIGTERM or SIGINT."""
    import uvicorn

    with listening_socket() as plain, listening_socket() as secure:
        app = app_for(f"http://{HOST}:{plain.getsockname()[1]}/mcp")
        # The MCP session manager runs once, in the plain server's lifespan; the HTTPS one serves the other routes.
        servers = [
            uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")),
            uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", ssl_certfile=certificate)),
        ]
        for server in servers:
            server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign]  # one handler stops both
        tasks = [
            asyncio.create_task(server.serve(sockets=[sock]))
            for server, sock in zip(servers, (plain, secure), strict=True)
        ]
        while not all(server.started for server in servers):
            await asyncio.sleep(0.01)
        print(f"over TLS at https://{HOST}:{secure.getsockname()[1]}", flush=True)
        print(f"jwt bearer test server listening on http://{HOST}:{plain.getsockname()[1]}/mcp", flush=True)
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            asyncio.get_running_loop().add_signal_handler(sig, stop.set)
        await stop.wait()
        for server in servers:
            server.should_exit = True
        await asyncio.gather(*tasks)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tls", metavar="PEM", help="also serve over HTTPS with this certificate and key")
    parser.add_argument("--dpop", action="store_true", help="offer DPoP-bound tokens")
    args = parser.parse_args()
    key, client_secret = os.environ.get(KEY_ENV), os.environ.get(SECRET_ENV)
    if not key or not client_secret:
        sys.exit(f"set {KEY_ENV} and {SECRET_ENV}")

    def app_for(url: str) -> Any:
        return build_app(url, key, client_secret, dpop=args.dpop)

    if args.tls:
        asyncio.run(_serve_with_tls(app_for, args.tls))
    else:
        serve_http_at(app_for, "/mcp", name="jwt bearer test server")


if __name__ == "__main__":
    main()
