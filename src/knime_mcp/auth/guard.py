"""What knime-mcp checks around the SDK's OAuth flow, against servers that mean harm: how much an OAuth answer may
hold, and which authorization server may get the client secret.

An MCP server names its authorization server, and the SDK goes where it is told: it fetches the metadata there,
registers there, and sends the client secret (client credentials, or a pre-registered confidential client) to its
token endpoint. The rule here: the secret goes only to an authorization server whose issuer the person configured
(*Authorization server (issuer)*, ``--issuer``) or confirmed by using it. Without a configured issuer, the issuer
that first gave tokens for the secret is remembered in the token store (like SSH's known hosts), and a server that
later names another is refused before anything goes there, with the issuer to confirm. A configured issuer holds
for every grant, and stops a sign-in before the browser opens. Every answer of an OAuth server (metadata,
registration, tokens) is read up to :data:`MAX_OAUTH_RESPONSE_BYTES`, never more.

The providers in :mod:`knime_mcp.auth.oauth` take :class:`GuardedFlow` before the SDK's provider class.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from urllib.parse import urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import issuers_match

from knime_mcp.auth.store import TokenStore
from knime_mcp.errors import ServerAuthError
from knime_mcp.net.http_pool import read_bounded

__all__ = ["MAX_OAUTH_RESPONSE_BYTES", "GuardedFlow"]

MAX_OAUTH_RESPONSE_BYTES = 256 * 1024
"""The most an OAuth answer (metadata, a registration, tokens) may hold; real ones hold a few kilobytes."""


class GuardedFlow(OAuthClientProvider):
    """The SDK's OAuth flow with answers read within :data:`MAX_OAUTH_RESPONSE_BYTES` and the client secret sent
    only to a trusted issuer; :meth:`guard` says for which server, store and issuer."""

    _server: str = ""
    _store: TokenStore | None = None
    _issuer: str | None = None
    _secret: bool = False

    def guard(self, *, server: str, store: TokenStore, issuer: str | None, secret: bool) -> None:
        """``server``: the display name errors carry; ``issuer``: the one configured; ``secret``: whether token
        requests carry a client secret (then an issuer is remembered at first use when none is configured)."""
        self._server, self._store, self._issuer, self._secret = server, store, issuer, secret

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super().async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                if outgoing is not request:
                    await self._read_within_limit(response)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def _select_authorization_server(self, advertised: list[str]) -> str:
        """The trusted issuer among those the MCP server names; refused before any request goes to another."""
        trusted = self._trusted_issuer()
        if trusted is None:
            return super()._select_authorization_server(advertised)
        for server in advertised:
            if issuers_match(server, trusted):
                return server
        raise self._untrusted(advertised[0], trusted)

    async def _perform_authorization(self) -> httpx2.Request:
        self._check_issuer()
        return await super()._perform_authorization()

    async def _refresh_token(self) -> httpx2.Request:
        self._check_issuer()
        return await super()._refresh_token()

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        await super()._handle_token_response(response)
        self._remember_issuer()

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        refreshed = await super()._handle_refresh_response(response)
        if refreshed:
            self._remember_issuer()
        return refreshed

    def _trusted_issuer(self) -> str | None:
        """The configured issuer; else, for a client secret, the one remembered from its first use."""
        if self._issuer is not None:
            return self._issuer
        return self._store.confirmed_issuer() if self._secret and self._store is not None else None

    def _current_issuer(self) -> str:
        """The issuer token requests go to now: the discovered metadata's, or the MCP server's origin, where the
        SDK sends them without metadata."""
        if (metadata := self.context.oauth_metadata) is not None:
            return str(metadata.issuer)
        parts = urlsplit(self.context.server_url)
        return f"{parts.scheme}://{parts.netloc}"

    def _check_issuer(self) -> None:
        if (trusted := self._trusted_issuer()) is not None and not issuers_match(self._current_issuer(), trusted):
            raise self._untrusted(self._current_issuer(), trusted)

    def _remember_issuer(self) -> None:
        if self._secret and self._issuer is None and self._store is not None and not self._store.confirmed_issuer():
            self._store.confirm_issuer(self._current_issuer())

    def _untrusted(self, named: str, trusted: str) -> ServerAuthError:
        withheld = "did not send it the client secret" if self._secret else "did not sign in there"
        if self._issuer is not None:
            return ServerAuthError(
                f"The MCP server names the authorization server {named}, not the issuer set in the OAuth settings "
                f"({trusted}); knime-mcp {withheld}.",
                server=self._server,
                hint="Check the 'Authorization server (issuer)' setting (--issuer) against the server's "
                "documentation; do not sign in until the MCP server names that issuer.",
            )
        return ServerAuthError(
            f"The MCP server now names the authorization server {named}, but this client's secret was first used "
            f"with {trusted}; knime-mcp {withheld}.",
            server=self._server,
            hint=f"If the server's administrators moved it, confirm the new one: set 'Authorization server (issuer)' "
            f"to {named} (--issuer {named}). Otherwise do not use this server until that is explained.",
        )

    async def _read_within_limit(self, response: httpx2.Response) -> None:
        """Read an OAuth server's answer whole, as the SDK would, but refuse it past the limit."""

        def too_large() -> ServerAuthError:
            origin = f"{response.request.url.scheme}://{response.request.url.netloc.decode()}"
            return ServerAuthError(
                f"An OAuth answer from {origin} ({response.request.url.path}) is larger than "
                f"{MAX_OAUTH_RESPONSE_BYTES // 1024} KiB; knime-mcp refuses it.",
                server=self._server,
                hint="OAuth metadata, registrations and tokens take a few kilobytes: check that the MCP server "
                "names the right authorization server, or ask its administrators.",
            )

        try:
            body = await read_bounded(response, MAX_OAUTH_RESPONSE_BYTES, too_large)
        except ServerAuthError:
            await response.aclose()
            raise
        response._content = body  # what Response.aread() keeps: the SDK and httpx2 read it from there
