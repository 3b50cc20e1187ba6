"""The client credentials grant with ``private_key_jwt`` client authentication (RFC 7523 §2.2), on the SDK's provider.

The client proves who it is with a short-lived assertion signed by its private key (:mod:`knime_mcp.auth.keys`) for
the authorization server's issuer; the key itself never leaves the process. The assertion is signed with the first
algorithm the key's type signs with that the authorization server lists in
``token_endpoint_auth_signing_alg_values_supported`` (RS256 or ES256 where it lists none), and names the key by its
RFC 7638 thumbprint (``kid``), so a server that holds several keys of the client knows which one to check. The
assertion goes only to a trusted issuer (:mod:`knime_mcp.auth.guard`), as a client secret would.
"""

from __future__ import annotations

import time
import uuid
import warnings

import jwt
from mcp.client.auth.extensions.client_credentials import PrivateKeyJWTOAuthProvider

from knime_mcp.auth.dpop import OAuthFlow
from knime_mcp.auth.keys import SigningKey, signing_key
from knime_mcp.auth.store import TokenStore
from knime_mcp.errors import ServerAuthError

__all__ = ["ASSERTION_SECONDS", "private_key_jwt_flow"]

ASSERTION_SECONDS = 300
"""How long an assertion is valid: long enough for one token request, short if it leaks."""


class _PrivateKeyJWT(OAuthFlow, PrivateKeyJWTOAuthProvider):
    """The SDK's private_key_jwt client credentials grant, guarded, with DPoP where offered."""


def private_key_jwt_flow(
    server_url: str, store: TokenStore, *, client_id: str, key: str, scope: str | None, issuer: str | None, server: str
) -> OAuthFlow:
    """The provider for a client whose ``key`` (a PEM, or the path of one) signs its assertions; ``server``: the
    display name errors carry."""
    loaded = signing_key(key)

    async def assertion(audience: str) -> str:
        metadata = flow.context.oauth_metadata
        offered = metadata.token_endpoint_auth_signing_alg_values_supported if metadata is not None else None
        now = int(time.time())
        claims = {"iss": client_id, "sub": client_id, "aud": audience, "iat": now,
                  "exp": now + ASSERTION_SECONDS, "jti": str(uuid.uuid4())}  # fmt: skip
        return jwt.encode(
            claims, loaded.pem, algorithm=_algorithm(loaded, offered, server), headers={"kid": loaded.kid}
        )

    with warnings.catch_warnings():
        # Without a configured issuer the guard remembers the first one (knime_mcp.auth.guard), as documented.
        warnings.simplefilter("ignore")
        flow = _PrivateKeyJWT(server_url, store, client_id, assertion, scope=scope, issuer=issuer)
    return flow


def _algorithm(key: SigningKey, offered: list[str] | None, server: str) -> str:
    """The first algorithm ``key`` signs with that the authorization server lists (``offered``, if it does)."""
    if not offered:
        return key.algorithm
    if usable := [name for name in key.algorithms if name in offered]:
        return usable[0]
    raise ServerAuthError(
        f"The authorization server takes private_key_jwt assertions signed with {', '.join(offered[:10])} only; "
        f"the client's key signs with {', '.join(key.algorithms)}.",
        server=server,
        hint="Register a key of a type the authorization server takes (an RSA or a P-256 key) and use that key.",
    )
