"""Test server: an MCP resource server that takes DPoP-bound tokens only (RFC 9449), behind the real authorization
server in tests/peers/oidc-provider.mjs started with ``--dpop``.

In front of tests/servers/oidc_mcp_server.py's server (the SDK's, with token introspection), a resource server's DPoP
check, as RFC 9449 §7 asks of one: ``Authorization: DPoP <token>`` with a ``DPoP`` proof whose signature verifies
with the key in its header, whose ``htm``/``htu`` name this request, whose ``iat`` is recent, whose ``jti`` was not
seen before, whose ``ath`` is the token's hash, and whose key's thumbprint is the token's ``cnf.jkt`` (from
introspection). A token presented as Bearer is refused. With ``--nonce`` every proof must carry the nonce this server
gives in a 401 ``use_dpop_nonce`` challenge. Each accepted request is printed: ``dpop accepted nonce=yes|no``.

    python dpop_mcp_server.py --issuer http://127.0.0.1:PORT [--nonce]

Prints `DPoP MCP server listening on http://127.0.0.1:PORT/mcp`.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import secrets
import sys
import time
from typing import Any

import httpx2
import jwt
from mcp.server.auth.routes import build_resource_metadata_url
from oidc_mcp_server import SECRET_ENV, IntrospectingVerifier, ScopePerTool, build_server
from pydantic import AnyHttpUrl
from starlette.types import ASGIApp, Receive, Scope, Send

from knime_mcp.demo_server import HOST, serve_http_at


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


_REQUIRED = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}


def thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638: the SHA-256 of the key's required members, sorted, without spaces."""
    members = {name: jwk[name] for name in _REQUIRED[jwk["kty"]]}
    return _b64(hashlib.sha256(json.dumps(members, separators=(",", ":"), sort_keys=True).encode()).digest())


class DPoPGate:
    """Lets a request through to the MCP server only with a DPoP-bound token and a valid proof for it, signed with
    one of ``algs``."""

    def __init__(
        self, app: ASGIApp, *, issuer: str, url: str, secret: str, nonce: bool, algs: tuple[str, ...] = ("ES256",)
    ) -> None:
        self._app, self._url, self._issuer, self._secret, self.algs = app, url, issuer, secret, algs
        self._nonce = secrets.token_urlsafe(16) if nonce else None
        self._seen: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", []))
        scheme, _, token = headers.get(b"authorization", b"").decode().partition(" ")
        if scope["type"] != "http" or not token:
            await self._app(scope, receive, send)
            return
        refusal = await self._refusal(scope, scheme, token, headers.get(b"dpop", b"").decode())
        if refusal is not None:
            await self._refuse(send, *refusal)
            return
        print(f"dpop accepted nonce={'yes' if self._nonce else 'no'}", flush=True)
        rest = [(name, value) for name, value in scope["headers"] if name != b"authorization"]
        await self._app({**scope, "headers": [*rest, (b"authorization", f"Bearer {token}".encode())]}, receive, send)

    async def _refusal(self, scope: Scope, scheme: str, token: str, proof: str) -> tuple[str, str] | None:
        """Why the request is refused (error, description), or None."""
        if scheme.lower() != "dpop" or not proof:
            return "invalid_token", "DPoP-bound tokens only: Authorization: DPoP with a DPoP proof"
        try:
            header = jwt.get_unverified_header(proof)
            assert header.get("typ") == "dpop+jwt" and header.get("alg") in self.algs
            claims = jwt.decode(proof, jwt.PyJWK(header["jwk"], header["alg"]).key, algorithms=list(self.algs))
        except (jwt.PyJWTError, AssertionError, KeyError) as exc:
            return "invalid_dpop_proof", f"proof does not verify: {exc}"
        path = scope["path"]
        checks = {
            "htm": claims.get("htm") == scope["method"],
            "htu": claims.get("htu") == self._url.rsplit("/", 1)[0] + path,
            "iat": abs(time.time() - claims.get("iat", 0)) < 60,
            "jti": isinstance(claims.get("jti"), str) and claims["jti"] not in self._seen,
            "ath": claims.get("ath") == _b64(hashlib.sha256(token.encode()).digest()),
        }
        if failed := [name for name, ok in checks.items() if not ok]:
            return "invalid_dpop_proof", f"proof claims wrong: {', '.join(failed)}"
        self._seen.add(claims["jti"])
        if self._nonce is not None and claims.get("nonce") != self._nonce:
            return "use_dpop_nonce", "a nonce is required"
        if (await self._introspect(token)).get("cnf", {}).get("jkt") != thumbprint(header["jwk"]):
            return "invalid_token", "token not bound to the proof's key"
        return None

    async def _introspect(self, token: str) -> dict[str, Any]:
        async with httpx2.AsyncClient() as http:
            response = await http.post(
                f"{self._issuer}/token/introspection", data={"token": token}, auth=("mcp-resource-server", self._secret)
            )
        return response.json() if response.status_code == 200 else {}

    async def _refuse(self, send: Send, error: str, description: str) -> None:
        challenge = f'DPoP error="{error}", error_description="{description}", algs="{" ".join(self.algs)}"'
        headers = [(b"www-authenticate", challenge.encode())]
        if self._nonce is not None:
            headers.append((b"dpop-nonce", self._nonce.encode()))
        print(f"dpop refused {error}: {description}", flush=True)
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--nonce", action="store_true")
    args = parser.parse_args()
    secret = os.environ.get(SECRET_ENV)
    if not secret:
        sys.exit(f"set {SECRET_ENV}")

    def app_for(url: str) -> object:
        app = build_server(args.issuer, url, secret).streamable_http_app(host=HOST)
        metadata = str(build_resource_metadata_url(AnyHttpUrl(url)))
        scoped = ScopePerTool(app, IntrospectingVerifier(args.issuer, url, secret), metadata)
        return DPoPGate(scoped, issuer=args.issuer, url=url, secret=secret, nonce=args.nonce)

    serve_http_at(app_for, "/mcp", name="DPoP MCP server")


if __name__ == "__main__":
    main()
