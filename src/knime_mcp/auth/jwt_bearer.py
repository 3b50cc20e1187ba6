"""The RFC 7523 JWT bearer grant at the MCP server's authorization server, on the SDK's OAuth flow.

Two sign-ins end here: workload identity (the assertion is a token the platform writes to a file,
:mod:`knime_mcp.auth.workload_identity`) and enterprise-managed authorization (the assertion is an ID-JAG the
enterprise identity provider issued, :mod:`knime_mcp.auth.id_jag`). The SDK finds the authorization server (protected
resource metadata, then its metadata) and keeps the tokens; this grant asks its :data:`AssertionSource` for a fresh
assertion on every token request and sends ``grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`` with it. A
refusal is reported once, never retried with another grant. Where the authorization server offers DPoP, the
tokens are bound to the client's key as the other grants' are (:mod:`knime_mcp.auth.dpop`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import httpx2
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.shared.auth import JWT_BEARER_GRANT_TYPE, OAuthClientInformationFull, OAuthClientMetadata

from knime_mcp.auth.dpop import OAuthFlow
from knime_mcp.errors import ServerAuthError
from knime_mcp.errors.masking import scrub_grant

__all__ = ["AssertionSource", "JwtBearerGrant", "oauth_refusal"]

AssertionSource = Callable[[str, str], Awaitable[str]]
"""Gives the assertion for one token request from ``(audience, resource)``: the authorization server's issuer and
the MCP server's resource identifier (RFC 8707)."""


def oauth_refusal(status: int, body: bytes, secrets: Iterable[str | None] = ()) -> str:
    """What an OAuth endpoint's error answer says (RFC 6749 5.2 ``error`` and ``error_description``), short, for a
    message; the body itself is never shown, and what it says is shown with the request's ``secrets`` (an assertion,
    a client secret) and any JWT masked before it is cut short: a careless server quotes back what it refused."""
    try:
        answer: Any = json.loads(body)
    except ValueError:
        answer = None
    if not isinstance(answer, dict) or not isinstance(answer.get("error"), str):
        return f"HTTP {status}"
    secrets = list(secrets)
    description = answer.get("error_description")
    detail = f": {scrub_grant(description, secrets)[:200]}" if isinstance(description, str) and description else ""
    return f"{scrub_grant(answer['error'], secrets)[:80]}{detail}"


class _JwtBearer(OAuthClientProvider):
    """The token request of the JWT bearer grant; the client authenticates with its secret (basic) when it has one,
    else it only names itself (or not at all: workload identity needs no registered client)."""

    def __init__(
        self,
        server_url: str,
        storage: TokenStorage,
        assertion: AssertionSource,
        *,
        client_id: str | None,
        client_secret: str | None,
        scope: str | None,
        server: str,
        refused_hint: str,
    ) -> None:
        """``server``: the display name errors carry; ``refused_hint``: what to do when the grant is refused."""
        method = "client_secret_basic" if client_secret else "none"
        metadata = OAuthClientMetadata(
            redirect_uris=None, grant_types=[JWT_BEARER_GRANT_TYPE], token_endpoint_auth_method=method, scope=scope
        )
        super().__init__(server_url, metadata, storage, None, None)
        self._assertion = assertion
        self._scope = scope
        self._refused_hint = refused_hint
        self._server_name = server
        self.sent_secrets: set[str] = {client_secret} if client_secret else set()
        """What this grant has sent (the client secret, each assertion), which a careless server may quote back."""
        # Built without validation: a workload may have no client id (RFC 7523 3.1), which the model would refuse.
        self._client = OAuthClientInformationFull.model_construct(
            client_id=client_id or "",
            client_secret=client_secret,
            grant_types=[JWT_BEARER_GRANT_TYPE],
            token_endpoint_auth_method=method,
        )

    async def _initialize(self) -> None:
        """Stored tokens, and the configured client: this grant never registers one."""
        self.context.current_tokens = await self.context.storage.get_tokens()
        self.context.client_info = self._client
        self._initialized = True

    async def _perform_authorization(self) -> httpx2.Request:
        metadata = self.context.oauth_metadata
        base = self.context.get_authorization_base_url(self.context.server_url)
        audience = str(metadata.issuer) if metadata is not None else base
        resource = self.context.get_resource_url()
        assertion = await self._assertion(audience, resource)
        self.sent_secrets.add(assertion)
        data: dict[str, str] = {"grant_type": JWT_BEARER_GRANT_TYPE, "assertion": assertion}
        if self._client.client_id and not self._client.client_secret:
            data["client_id"] = self._client.client_id
        if self.context.should_include_resource_param(self.context.protocol_version):
            data["resource"] = resource
        if scope := self._scope or self.context.client_metadata.scope:
            data["scope"] = scope
        data, headers = self.context.prepare_token_auth(data, {"Content-Type": "application/x-www-form-urlencoded"})
        return httpx2.Request("POST", self._get_token_endpoint(), data=data, headers=headers)

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        if response.status_code not in (200, 201):
            raise ServerAuthError(
                "The authorization server refused the JWT bearer grant "
                f"({oauth_refusal(response.status_code, await response.aread(), self.sent_secrets)}).",
                server=self._server_name,
                hint=self._refused_hint,
            )
        await super()._handle_token_response(response)


class JwtBearerGrant(OAuthFlow, _JwtBearer):
    """The JWT bearer grant, guarded: the assertion and the client secret go only to the configured issuer, or to
    the one first used (:mod:`knime_mcp.auth.guard`); with DPoP where offered."""
