"""Enterprise-managed authorization: an identity provider's assertion exchanged for an ID-JAG, the JWT bearer grant's
assertion (the MCP authorization extensions' Identity Assertion JWT Authorization Grant, "cross-app access").

The person or the executor holds an identity assertion from the enterprise identity provider (an ID token, from a
KNIME credential or a ``${VAR}``). For every token request at the MCP server's authorization server it is exchanged
at the identity provider's token endpoint (RFC 8693 token exchange, ``requested_token_type`` ID-JAG, ``audience`` the
authorization server's issuer, ``resource`` the MCP server), and the ID-JAG it gives is the assertion of
:class:`~knime_mcp.auth.jwt_bearer.JwtBearerGrant`. The identity provider decides, by its policy, which MCP servers a
person may reach.

The exchange goes through the run's connection pool with the MCP server's TLS settings: a company's identity
provider sits behind the same company CA as its MCP servers.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx2

from knime_mcp.auth.guard import MAX_OAUTH_RESPONSE_BYTES
from knime_mcp.auth.jwt_bearer import AssertionSource, oauth_refusal
from knime_mcp.config import ENV_REF, CredentialLookup, credential_password, expand_env
from knime_mcp.errors import ServerAuthError
from knime_mcp.errors.certificates import certificate_error
from knime_mcp.net.http_pool import read_bounded

__all__ = ["ID_JAG_TOKEN_TYPE", "ClientFactory", "id_jag_source", "named_secret"]

ClientFactory = Callable[[], httpx2.AsyncClient]
"""A new client for one exchange, over the run's pool with the server's TLS settings."""

TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
EXCHANGE_TIMEOUT_SECONDS = 30.0

_IDP_HINT = (
    "Check the identity provider settings (token endpoint, client id and secret), and that the identity assertion "
    "is a current ID token for this client: sign in at the identity provider again for a fresh one. The identity "
    "provider's administrators decide which MCP servers a person may reach."
)


def named_secret(source: str, credentials: CredentialLookup | None, server: str) -> str:
    """The value a ``${VAR}`` reference or a KNIME credential name (its password) stands for, read now."""
    if ENV_REF.fullmatch(source):
        return expand_env(source, server=server)
    return credential_password(source, credentials, server)


def id_jag_source(
    token_endpoint: str,
    identity_assertion: str,
    *,
    client_id: str | None,
    client_secret: str | None,
    server: str,
    http: ClientFactory,
) -> AssertionSource:
    """The assertion source that exchanges ``identity_assertion`` at the identity provider's ``token_endpoint`` for
    an ID-JAG for the authorization server (the audience) and the MCP server (the resource), anew for each token
    request: an ID-JAG lives minutes. ``http``: the client to send it with."""

    async def exchange(audience: str, resource: str) -> str:
        data = {
            "grant_type": TOKEN_EXCHANGE_GRANT,
            "requested_token_type": ID_JAG_TOKEN_TYPE,
            "subject_token": identity_assertion,
            "subject_token_type": ID_TOKEN_TYPE,
            "audience": audience,
            "resource": resource,
        }
        if client_id and not client_secret:
            data["client_id"] = client_id
        basic = (client_id or "", client_secret) if client_secret else None
        try:
            async with http() as client, client.stream("POST", token_endpoint, data=data, auth=basic) as response:
                body = await read_bounded(response, MAX_OAUTH_RESPONSE_BYTES, lambda: _refused("answered too much"))
        except httpx2.HTTPError as exc:
            if (untrusted := certificate_error(exc, server)) is not None:
                raise untrusted from None
            raise _refused(f"could not be reached ({type(exc).__name__})") from None
        if response.status_code != 200:
            refusal = oauth_refusal(response.status_code, body, (identity_assertion, client_secret))
            raise _refused(f"refused to exchange the identity assertion for an ID-JAG ({refusal})")
        return _id_jag(body)

    def _refused(what: str) -> ServerAuthError:
        return ServerAuthError(f"The identity provider at {token_endpoint} {what}.", server=server, hint=_IDP_HINT)

    def _id_jag(body: bytes) -> str:
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        if (
            not isinstance(answer, dict)
            or not isinstance(answer.get("access_token"), str)
            or answer.get("issued_token_type") != ID_JAG_TOKEN_TYPE
        ):
            raise _refused("answered the token exchange without an ID-JAG")
        return str(answer["access_token"])

    return exchange
