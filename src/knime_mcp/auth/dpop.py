"""DPoP (RFC 9449): access tokens bound to a key the client holds, so a token that leaks is no use without the key.

Where the authorization server's metadata lists an algorithm knime-mcp signs with in
``dpop_signing_alg_values_supported``, or the MCP server challenges with ``DPoP`` (RFC 9449 §7.1, whatever the
metadata says), and the setting does not switch it off, every token request (grant and refresh) carries a proof
signed by a key of the first algorithm of :data:`DPOP_ALGORITHMS` that both list (their ``algs``); the tokens the
server then binds to that key (``token_type: DPoP``) go to the MCP server as ``Authorization: DPoP <token>`` with a
fresh proof per request (``htm``, ``htu``, ``iat``, ``jti``, ``ath``). A server that asks for a nonce
(``use_dpop_nonce``: the authorization server's 400, the MCP server's 401 in a ``DPoP`` challenge, in any case and
among any other challenges, :mod:`knime_mcp.auth.challenges`) gets the request again, once, with the nonce it
gave. The key is made for the sign-in and kept beside its tokens (:class:`~knime_mcp.auth.store.TokenStore`), so a
later run can use or refresh them; it never leaves the machine.

:class:`DPoPFlow` sits between :class:`~knime_mcp.auth.guard.GuardedFlow` and the SDK's provider class, so it sees
each request of the SDK's flow and each answer after the guard has read it within its limit.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import parse_qsl

import httpx2
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import PrivateKeyJWTOAuthProvider

from knime_mcp.auth.challenges import challenges
from knime_mcp.auth.guard import GuardedFlow
from knime_mcp.auth.keys import PrivateKey, key_algorithms, public_jwk
from knime_mcp.auth.store import TokenStore

__all__ = ["DPOP_ALGORITHM", "DPOP_ALGORITHMS", "DPoPFlow", "DPoPKey", "OAuthFlow"]

DPOP_ALGORITHM = "ES256"
"""The algorithm of a proof where neither server names one."""
_NEW_KEYS: dict[str, Any] = {
    "ES256": lambda: ec.generate_private_key(ec.SECP256R1()),
    "EdDSA": ed25519.Ed25519PrivateKey.generate,
    "ES384": lambda: ec.generate_private_key(ec.SECP384R1()),
    "ES512": lambda: ec.generate_private_key(ec.SECP521R1()),
    "RS256": lambda: rsa.generate_private_key(65537, 2048),
}
DPOP_ALGORITHMS = tuple(_NEW_KEYS)
"""What knime-mcp signs proofs with, preferred first; each key type signs with one of them, so a stored key says
its algorithm."""
_NONCE_HEADER = "DPoP-Nonce"


class DPoPKey:
    """A key that signs DPoP proofs (``algorithm``, one of :data:`DPOP_ALGORITHMS`); its public half travels in each
    proof's header. A stored key (``pem``) signs with the algorithm of its type."""

    def __init__(self, pem: str | None = None, *, algorithm: str = DPOP_ALGORITHM) -> None:
        key = serialization.load_pem_private_key(pem.encode(), password=None) if pem else None
        kept = [name for name in key_algorithms(key) if name in _NEW_KEYS] if key is not None else []  # type: ignore[arg-type]
        self.algorithm = kept[0] if kept else algorithm
        self._key: PrivateKey = key if kept else _NEW_KEYS[algorithm]()  # type: ignore[assignment]
        self.jwk = public_jwk(self._key)

    @property
    def pem(self) -> str:
        encoding, pkcs8 = serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8
        return self._key.private_bytes(encoding, pkcs8, serialization.NoEncryption()).decode()

    def proof(self, request: httpx2.Request, *, nonce: str | None = None, access_token: str | None = None) -> str:
        """A proof for ``request`` (RFC 9449 §4.2): its method and URL without query and fragment."""
        url = request.url.copy_with(query=None, fragment=None)
        claims: dict[str, Any] = {"jti": str(uuid.uuid4()), "htm": request.method, "htu": str(url)}
        claims["iat"] = int(time.time())
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["ath"] = jwt.utils.base64url_encode(hashlib.sha256(access_token.encode()).digest()).decode()
        headers = {"typ": "dpop+jwt", "jwk": self.jwk}
        return jwt.encode(claims, self._key, algorithm=self.algorithm, headers=headers)


class DPoPFlow(OAuthClientProvider):
    """The SDK's OAuth flow with DPoP where the authorization server offers it; :meth:`use_dpop` says whether the
    setting allows it and where the key is kept."""

    _dpop_allowed: bool = False
    _dpop_store: TokenStore | None = None
    _dpop_key: DPoPKey | None = None
    _dpop_bound: bool = False
    _dpop_offered: list[str] | None = None
    """The algorithms the authorization server's metadata lists, if it does."""
    _dpop_challenged: list[str] | None = None
    """The algorithms the MCP server's DPoP challenge lists (empty: it names none), if it sent one."""
    _nonces: dict[str, str]
    """The last nonce each server (by origin) gave."""

    def use_dpop(self, *, allowed: bool, store: TokenStore) -> None:
        """``allowed``: the setting (auto: True); tokens an earlier run bound with DPoP go on with its key."""
        self._dpop_allowed, self._dpop_store, self._nonces = allowed, store, {}
        if allowed and (kept := store.dpop_key()):
            self._dpop_key, self._dpop_bound = DPoPKey(kept), True

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super().async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                proven = self._prove(outgoing, resource=outgoing is request)
                response = yield outgoing
                if outgoing is request and response.status_code == 401:
                    self._note_challenge(response)
                if proven and self._asks_for_nonce(response, resource=outgoing is request):
                    again = outgoing if outgoing is request else await self._token_request_again(outgoing)
                    self._prove(again, resource=outgoing is request)
                    response = yield again
                if proven and outgoing is not request:
                    self._note_token_type(response)
                elif _is_server_metadata(outgoing) and response.status_code == 200:
                    offered = _json(response).get("dpop_signing_alg_values_supported")
                    self._dpop_offered = [str(name) for name in offered] if isinstance(offered, list) else None
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _offered(self) -> bool:
        """Whether token requests carry proofs: where the setting allows it, the metadata offers an algorithm
        knime-mcp signs with (the SDK's model drops that field, so it is read here), the MCP server challenged with
        DPoP, or the tokens held are bound already."""
        offered = self._dpop_offered is not None and any(name in DPOP_ALGORITHMS for name in self._dpop_offered)
        return self._dpop_allowed and (offered or self._dpop_challenged is not None or self._dpop_bound)

    def _algorithm(self) -> str:
        """The first of :data:`DPOP_ALGORITHMS` both servers list (each that lists any); else the first the
        authorization server lists, which binds the token."""
        lists = [names for names in (self._dpop_offered, self._dpop_challenged) if names]
        for usable in (lists, lists[:1]):
            if chosen := [name for name in DPOP_ALGORITHMS if all(name in names for names in usable)]:
                return chosen[0]
        return DPOP_ALGORITHM

    def _note_challenge(self, response: httpx2.Response) -> None:
        """An MCP server's ``DPoP`` challenge asks for DPoP-bound tokens with the algorithms it lists."""
        for challenge in challenges(response.headers.get_list("WWW-Authenticate")):
            if challenge.scheme == "dpop":
                self._dpop_challenged = challenge.params.get("algs", "").split()

    def _prove(self, request: httpx2.Request, *, resource: bool) -> bool:
        """Add a proof to a token request, or present a bound token with one; whether it did."""
        nonce = self._nonces.get(_origin(request.url))
        if resource:
            scheme, _, token = request.headers.get("Authorization", "").partition(" ")
            if not (self._dpop_bound and self._dpop_key and scheme in ("Bearer", "DPoP") and token):
                return False
            request.headers["Authorization"] = f"DPoP {token}"
            request.headers["DPoP"] = self._dpop_key.proof(request, nonce=nonce, access_token=token)
            return True
        if not (_is_token_request(request) and self._offered()):
            return False
        if self._dpop_key is None:
            self._dpop_key = DPoPKey(algorithm=self._algorithm())
        request.headers["DPoP"] = self._dpop_key.proof(request, nonce=nonce)
        return True

    async def _token_request_again(self, request: httpx2.Request) -> httpx2.Request:
        """The token request anew, for a second try: a client assertion may be used once only, so it is made anew."""
        form = dict(parse_qsl(request.content.decode()))
        if "client_assertion" in form and isinstance(self, PrivateKeyJWTOAuthProvider):
            await self._add_client_authentication_jwt(token_data=form)
        headers = {name: value for name, value in request.headers.items() if name.lower() != "content-length"}
        return httpx2.Request(request.method, request.url, data=form, headers=headers)

    def _asks_for_nonce(self, response: httpx2.Response, *, resource: bool) -> bool:
        """Remember a nonce the server gives; whether it refused the request for want of one (RFC 9449 §8, §9)."""
        nonce = response.headers.get(_NONCE_HEADER)
        if not nonce:
            return False
        self._nonces[_origin(response.request.url)] = nonce
        if resource:
            asked = challenges(response.headers.get_list("WWW-Authenticate"))
            return response.status_code == 401 and any(
                challenge.scheme == "dpop" and challenge.params.get("error") == "use_dpop_nonce" for challenge in asked
            )
        return response.status_code == 400 and _json(response).get("error") == "use_dpop_nonce"

    def _note_token_type(self, response: httpx2.Response) -> None:
        """A token answer says whether the tokens are bound; the SDK takes Bearer tokens only, so a DPoP one is
        handed on as such, and its key kept beside it."""
        body = _json(response)
        if response.status_code != 200 or "access_token" not in body:
            return
        self._dpop_bound = str(body.get("token_type", "")).lower() == "dpop"
        if self._dpop_bound:
            response._content = json.dumps({**body, "token_type": "Bearer"}).encode()
        if self._dpop_store is not None and self._dpop_key is not None:
            self._dpop_store.keep_dpop_key(self._dpop_key.pem if self._dpop_bound else None)


class OAuthFlow(GuardedFlow, DPoPFlow):
    """The SDK's OAuth flow as knime-mcp runs it: guarded (:mod:`knime_mcp.auth.guard`), with DPoP where offered;
    each grant's provider takes it before the SDK's provider class."""


def _is_server_metadata(request: httpx2.Request) -> bool:
    """An authorization server's metadata request (RFC 8414, OpenID Connect discovery)."""
    path = request.url.path
    return request.method == "GET" and (
        "/.well-known/oauth-authorization-server" in path or "/.well-known/openid-configuration" in path
    )


def _is_token_request(request: httpx2.Request) -> bool:
    form = request.headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded")
    return request.method == "POST" and form and b"grant_type=" in request.content


def _origin(url: httpx2.URL) -> str:
    return f"{url.scheme}://{url.netloc.decode()}"


def _json(response: httpx2.Response) -> dict[str, Any]:
    try:
        body = json.loads(response.content)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
