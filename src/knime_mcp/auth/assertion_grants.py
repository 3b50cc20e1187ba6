"""Which JWT bearer grant a server's settings name (workload identity or ID-JAG), built for one run.

Its own module because :mod:`knime_mcp.auth.oauth` picks among all grants and the two assertion sources need the
grant's module below them.
"""

from __future__ import annotations

import httpx2

from knime_mcp.auth.id_jag import EXCHANGE_TIMEOUT_SECONDS, id_jag_source, named_secret
from knime_mcp.auth.jwt_bearer import AssertionSource, JwtBearerGrant
from knime_mcp.auth.store import TokenStore
from knime_mcp.auth.workload_identity import token_file_source
from knime_mcp.config import CredentialLookup, ServerSpec
from knime_mcp.net.http_pool import HttpPool

__all__ = ["assertion_grant", "assertion_store"]

_HINTS = {
    "oauth-workload-identity": "The authorization server does not accept this workload's token: ask its "
    "administrators to trust the platform's issuer and this workload (the token's subject) for the MCP server, and "
    "check the client id and scope settings.",
    "oauth-id-jag": "The authorization server does not accept the identity provider's grant for this client: check "
    "the client id and secret at the authorization server, and ask its administrators to trust the identity "
    "provider.",
}


def assertion_store(spec: ServerSpec, client_id: str | None) -> TokenStore:
    """Where this grant's tokens are kept: apart from a person's sign-in at the same server."""
    return TokenStore.for_server(spec.target, client=f"{spec.auth.kind} {client_id or ''}")


def assertion_grant(
    spec: ServerSpec,
    credentials: CredentialLookup | None,
    *,
    client_id: str | None,
    client_secret: str | None,
    pool: HttpPool,
) -> JwtBearerGrant:
    """The JWT bearer grant for ``spec`` (``spec.auth.kind`` one of ``ASSERTION_KINDS``), with the client identity
    at the MCP server's authorization server already resolved. The assertion, like a client secret, goes only to the
    configured issuer or the one first used (:mod:`knime_mcp.auth.guard`). ``pool``: the run's, which the identity
    provider is reached through, with the server's TLS settings."""
    auth, server = spec.auth, spec.display_name
    source: AssertionSource
    at_idp: set[str] = set()
    if auth.kind == "oauth-workload-identity":
        source = token_file_source(auth.token_file or "", server=server)
    else:
        identity = named_secret(auth.assertion or "", credentials, server)
        idp_secret = named_secret(auth.idp_secret, credentials, server) if auth.idp_secret else None
        at_idp = {value for value in (identity, idp_secret) if value}
        source = id_jag_source(
            auth.idp_token_endpoint or "",
            identity,
            client_id=auth.idp_client_id,
            client_secret=idp_secret,
            server=server,
            http=lambda: pool.client(
                timeout=httpx2.Timeout(EXCHANGE_TIMEOUT_SECONDS), tls=spec.tls, credentials=credentials, server=server
            ),
        )
    store = assertion_store(spec, client_id)
    grant = JwtBearerGrant(
        spec.target,
        store,
        source,
        client_id=client_id,
        client_secret=client_secret,
        scope=auth.scope,
        server=server,
        refused_hint=_HINTS[auth.kind],
    )
    grant.sent_secrets |= at_idp
    sent = "the workload identity token" if auth.kind == "oauth-workload-identity" else "the ID-JAG"
    sent += " and the client secret" if client_secret else ""
    grant.guard(server=server, store=store, issuer=auth.issuer, secret=sent, unattended=True)
    grant.use_dpop(allowed=auth.dpop != "off", store=store)
    store.attach(grant.context)
    return grant
