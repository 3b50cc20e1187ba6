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

Every token request is printed as ``token request: <grant_type>`` (an assertion never is). Refusals are careless
as some real servers' are: their ``error_description`` quotes the assertion or ID token they refused.

With ``--dpop`` the authorization server offers DPoP (RFC 9449, ES256 in its metadata): a token request with a valid
proof (``htm``/``htu`` the token endpoint) gets a token bound to the proof's key (``token_type: DPoP``), which the MCP
server then takes only as ``Authorization: DPoP`` with a valid proof (tests/servers/dpop_mcp_server.py's checks);
without a proof, a Bearer token as before. Each token issued is printed as ``token issued: DPoP|Bearer``, each MCP
request with a bound token as ``dpop accepted nonce=no``, each with a Bearer one as ``bearer presented``, each token
request's valid proof as ``token request proof signed with ALG``. Further DPoP options: ``--dpop-algs "ES384 EdDSA"``
(the algorithms both servers take, and list: ES256 by default); ``--dpop-unannounced`` (the metadata lists none,
though the authorization server binds tokens to proofs); ``--dpop-required`` (the MCP server refuses Bearer tokens,
and its every 401 adds a ``DPoP algs=…`` challenge); ``--dpop-nonce STYLE`` (the MCP server wants a nonce, a new
one every third request, and writes its ``use_dpop_nonce`` challenge ``lowercase``
(``dpop error=…``), ``after-bearer`` (``Bearer realm="mcp", DPoP error=…`` in one header) or ``own-header``
(``Bearer`` and ``DPoP`` challenges in two headers)).

With ``--issuer-host NAME`` the authorization server's issuer is ``http://NAME:PORT`` (its protected resource metadata
names that): the same process, which a client reaching the MCP server at 127.0.0.1 sees on another host, as with an
authorization server elsewhere. ``/token`` takes the client credentials grant of ``knime-mcp-xaa`` (basic
authentication) too; each metadata request is printed as ``metadata request``.

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
    """dpop_mcp_server's resource server check for the tokens bound here; Bearer tokens pass as before unless
    ``required``; ``nonce``: how its nonce challenge is written, if it wants one."""

    def __init__(
        self, app: ASGIApp, tokens: _Tokens, *, issuer: str, url: str, algs: tuple[str, ...], required: bool,
        nonce: str | None,
    ) -> None:  # fmt: skip
        super().__init__(app, issuer=issuer, url=url, secret="", nonce=nonce is not None, algs=algs)
        self._tokens, self._required, self._style = tokens, required, nonce
        self._proofs = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", []))
        scheme, _, token = headers.get(b"authorization", b"").decode().partition(" ")
        unbound = scheme.lower() == "bearer" and token not in self._tokens.bound
        if unbound and self._required:
            await self._refuse(send, "invalid_token", "DPoP-bound tokens only")
        elif unbound or scheme.lower() not in ("bearer", "dpop"):  # else: the token endpoint's Basic, say
            if unbound:
                print("bearer presented", flush=True)
            await self._app(scope, receive, self._challenging(send) if self._required else send)
        else:
            self._proofs += 1
            if self._nonce is not None and self._proofs % 3 == 0:
                self._nonce = secrets.token_urlsafe(16)  # as nonces expire: a request in the session is refused
            await super().__call__(scope, receive, send)

    def _challenging(self, send: Send) -> Send:
        """``send`` with a DPoP challenge added to a 401 (the SDK's server challenges with Bearer alone)."""

        async def with_dpop(message: Any) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                challenge = (b"www-authenticate", f'DPoP algs="{" ".join(self.algs)}"'.encode())
                message = {**message, "headers": [*message.get("headers", []), challenge]}
            await send(message)

        return with_dpop

    async def _refuse(self, send: Send, error: str, description: str) -> None:
        dpop = f'error="{error}", error_description="{description}", algs="{" ".join(self.algs)}"'
        written = {
            "lowercase": [f"dpop {dpop}"],
            "after-bearer": [f'Bearer realm="mcp", DPoP {dpop}'],
            "own-header": ['Bearer realm="mcp"', f"DPoP {dpop}"],
        }.get(self._style or "", [f"DPoP {dpop}"])
        headers = [(b"www-authenticate", challenge.encode()) for challenge in written]
        if self._nonce is not None:
            headers.append((b"dpop-nonce", self._nonce.encode()))
        print(f"dpop refused {error}: {description}", flush=True)
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    async def _introspect(self, token: str) -> dict[str, Any]:
        return {"cnf": {"jkt": self._tokens.bound.get(token)}}


def _proof_key(proof: str, token_endpoint: str, algs: tuple[str, ...]) -> str | None:
    """The thumbprint of the key a token request's DPoP proof was signed with, if the proof is valid for it and
    signed with one of ``algs``."""
    try:
        header = jwt.get_unverified_header(proof)
        if header.get("alg") not in algs:
            return None
        claims = jwt.decode(proof, jwt.PyJWK(header["jwk"], header["alg"]).key, algorithms=list(algs))
    except (jwt.PyJWTError, KeyError):
        return None
    if header.get("typ") != "dpop+jwt" or claims.get("htm") != "POST" or claims.get("htu") != token_endpoint:
        return None
    print(f"token request proof signed with {header['alg']}", flush=True)
    return thumbprint(header["jwk"])


def build_app(url: str, key: str, client_secret: str, options: argparse.Namespace) -> Any:
    dpop, algs = options.dpop, tuple(options.dpop_algs.split())
    issuer_host = options.issuer_host
    issuer = url.removesuffix("/mcp")
    if issuer_host is not None:
        issuer = issuer.replace(HOST, issuer_host)
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
        print("metadata request", flush=True)
        return JSONResponse(
            {
                "issuer": issuer,
                "authorization_endpoint": f"{issuer}/authorize",
                "token_endpoint": f"{issuer}/token",
                "grant_types_supported": [JWT_BEARER, "client_credentials"],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
                "response_types_supported": ["code"],
                **({"dpop_signing_alg_values_supported": list(algs)} if dpop and not options.dpop_unannounced else {}),
            }
        )

    @server.custom_route("/token", methods=["POST"])
    async def token(request: Request) -> Response:
        form = await request.form()
        print(f"token request: {form.get('grant_type')}", flush=True)
        if form.get("grant_type") == "client_credentials":
            client = _basic_client(request)
            if client is None or client[0] != AS_CLIENT or not hmac.compare_digest(client[1], client_secret):
                return _refuse("invalid_client", "client authentication failed", 401)
            return tokens.grant(AS_CLIENT)
        if form.get("grant_type") != JWT_BEARER:
            return _refuse("unsupported_grant_type", "only the JWT bearer and client credentials grants")
        assertion = str(form.get("assertion", ""))
        bound_to = None
        if dpop and (proof := request.headers.get("dpop")):
            if (bound_to := _proof_key(proof, f"{issuer}/token", algs)) is None:
                return _refuse("invalid_dpop_proof", "the DPoP proof does not verify for this request")
        if jwt.get_unverified_header(assertion).get("typ") != "oauth-id-jag+jwt":
            try:
                claims = jwt.decode(assertion, key, algorithms=["HS256"], audience=issuer)
            except jwt.PyJWTError as exc:
                return _refuse("invalid_grant", f"workload token {assertion} not accepted: {exc}")
            return tokens.grant(claims["sub"], bound_to)
        client = _basic_client(request)
        if client is None or client[0] != AS_CLIENT or not hmac.compare_digest(client[1], client_secret):
            return _refuse("invalid_client", f"client authentication failed for the ID-JAG {assertion}", 401)
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
        subject_token = str(form.get("subject_token"))
        try:
            identity = jwt.decode(subject_token, key, algorithms=["HS256"], audience=IDP_CLIENT)
        except jwt.PyJWTError as exc:
            return _refuse("invalid_grant", f"ID token {subject_token} not accepted: {exc}")
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
    if not dpop:
        return app
    required, nonce = options.dpop_required, options.dpop_nonce
    return _BoundTokenGate(app, tokens, issuer=issuer, url=url, algs=algs, required=required, nonce=nonce)


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
    parser.add_argument("--issuer-host", help="the host name of the authorization server's issuer")
    parser.add_argument("--dpop-algs", default="ES256", help="the DPoP algorithms taken, space-separated")
    parser.add_argument("--dpop-unannounced", action="store_true", help="list no DPoP algorithms in the metadata")
    parser.add_argument("--dpop-required", action="store_true", help="the MCP server takes DPoP-bound tokens only")
    parser.add_argument("--dpop-nonce", choices=["lowercase", "after-bearer", "own-header"], help="want a nonce")
    args = parser.parse_args()
    key, client_secret = os.environ.get(KEY_ENV), os.environ.get(SECRET_ENV)
    if not key or not client_secret:
        sys.exit(f"set {KEY_ENV} and {SECRET_ENV}")

    def app_for(url: str) -> Any:
        return build_app(url, key, client_secret, args)

    if args.tls:
        asyncio.run(_serve_with_tls(app_for, args.tls))
    else:
        serve_http_at(app_for, "/mcp", name="jwt bearer test server")


if __name__ == "__main__":
    main()
