"""The client credentials grant with ``private_key_jwt`` client authentication (RFC 7523 §2.2), on the SDK's provider.

The client proves who it is with a short-lived assertion signed by its private key (:mod:`knime_mcp.auth.keys`),
which the SDK's :class:`~mcp.client.auth.extensions.client_credentials.SignedJWTParameters` signs for the
authorization server's issuer; the key itself never leaves the process. The assertion goes only to a trusted issuer
(:mod:`knime_mcp.auth.guard`), as a client secret would.
"""

from __future__ import annotations

import warnings

from mcp.client.auth.extensions.client_credentials import PrivateKeyJWTOAuthProvider, SignedJWTParameters

from knime_mcp.auth.dpop import OAuthFlow
from knime_mcp.auth.keys import signing_key
from knime_mcp.auth.store import TokenStore

__all__ = ["private_key_jwt_flow"]


class _PrivateKeyJWT(OAuthFlow, PrivateKeyJWTOAuthProvider):
    """The SDK's private_key_jwt client credentials grant, guarded, with DPoP where offered."""


def private_key_jwt_flow(
    server_url: str, store: TokenStore, *, client_id: str, key: str, scope: str | None, issuer: str | None
) -> OAuthFlow:
    """The provider for a client whose ``key`` (a PEM, or the path of one) signs its assertions: RS256 for an RSA
    key, ES256 for a P-256 key."""
    loaded = signing_key(key)
    assertion = SignedJWTParameters(
        issuer=client_id, subject=client_id, signing_key=loaded.pem, signing_algorithm=loaded.algorithm
    )
    with warnings.catch_warnings():
        # Without a configured issuer the guard remembers the first one (knime_mcp.auth.guard), as documented.
        warnings.simplefilter("ignore")
        return _PrivateKeyJWT(
            server_url,
            store,
            client_id,
            assertion.create_assertion_provider(),
            scope=scope,
            issuer=issuer,
        )
