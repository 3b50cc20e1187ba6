"""What knime-mcp checks around the SDK's OAuth flow, against servers that mean harm: how much an OAuth answer may
hold, and which authorization server may get the client secret.

An MCP server names its authorization server, and the SDK goes where it is told: it fetches the metadata there,
registers there, and sends the client secret (client credentials, or a pre-registered confidential client) to its
token endpoint. The rule here: the secret goes only to an authorization server whose issuer the person configured
(*Authorization server (issuer)*, ``--issuer``) or confirmed by using it. Without a configured issuer, the issuer
that first gave tokens for the secret is remembered in the token store (like SSH's known hosts), and a server that
later names another is refused before anything goes there, with the issuer to confirm. Where nobody watches the
sign-in (client credentials, workload identity, ID-JAG), that first use needs the authorization server on the MCP
server's own host (scheme and host name; the port may differ): one elsewhere needs the issuer set first, since the
MCP server alone would otherwise decide where the secret goes. A configured issuer holds for every grant, and stops
a sign-in before the browser opens. Every answer of an OAuth server (metadata,
registration, tokens) is read up to :data:`MAX_OAUTH_RESPONSE_BYTES`, never more. And every request the flow sends to
another host than the MCP server's or the trusted issuer's (the ``resource_metadata`` a challenge names, the
``authorization_servers`` the resource metadata names, their endpoints) goes only where the SSRF guard lets the MCP
server lead (:func:`knime_mcp.net.urlguard.check_discovery`: never further in than the server itself is, so a server
on the internet cannot send knime-mcp to this machine, the local network or a cloud metadata address), pinned to the
address checked.

The providers in :mod:`knime_mcp.auth.oauth` take :class:`GuardedFlow` before the SDK's provider class.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from urllib.parse import urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import issuers_match

from knime_mcp.auth.store import TokenStore
from knime_mcp.errors import ConfigError, ServerAuthError
from knime_mcp.net.http_pool import read_bounded
from knime_mcp.net.urlguard import check_discovery, origin_of

__all__ = ["MAX_OAUTH_RESPONSE_BYTES", "GuardedFlow"]

MAX_OAUTH_RESPONSE_BYTES = 256 * 1024
"""The most an OAuth answer (metadata, a registration, tokens) may hold; real ones hold a few kilobytes."""


class GuardedFlow(OAuthClientProvider):
    """The SDK's OAuth flow with answers read within :data:`MAX_OAUTH_RESPONSE_BYTES` and the client secret sent
    only to a trusted issuer; :meth:`guard` says for which server, store and issuer."""

    _server: str = ""
    _store: TokenStore | None = None
    _issuer: str | None = None
    _secret: str | None = None
    _unattended: bool = False

    def guard(
        self, *, server: str, store: TokenStore, issuer: str | None, secret: str | None, unattended: bool = False
    ) -> None:
        """``server``: the display name errors carry; ``issuer``: the one configured; ``secret``: what secret token
        requests carry, in words ("the client secret"), or None (then an issuer is remembered at first use when none
        is configured); ``unattended``: nobody sees where it goes (the first use then needs the MCP server's host)."""
        self._server, self._store, self._issuer, self._secret = server, store, issuer, secret
        self._unattended = unattended

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super().async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing if outgoing is request else await self._pinned(outgoing)
                if outgoing is not request:
                    response.request = outgoing  # as the flow sent it, with its host name
                    await self._read_within_limit(response)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    async def _pinned(self, request: httpx2.Request) -> httpx2.Request:
        """``request`` of the OAuth flow as it goes out: to the MCP server's or the trusted issuer's host as it is,
        elsewhere only where the MCP server may lead, to the address checked."""
        url, trusted = str(request.url), self._trusted_issuer()
        if origin_of(url)[:2] in {origin_of(known)[:2] for known in (self.context.server_url, trusted) if known}:
            return request
        try:
            pin = await check_discovery(url, server_url=self.context.server_url)
        except ConfigError as exc:
            raise ServerAuthError(
                f"{exc.message.rstrip('.')}; knime-mcp did not go there to sign in.",
                server=self._server,
                hint="An MCP server may lead the sign-in only to addresses no further in than its own (one on the "
                "internet to public addresses only). If the authorization server is meant to be there, set "
                "'Authorization server (issuer)' to it (--issuer).",
            ) from None
        pinned = request.url.copy_with(host=pin.address)
        extensions = {**request.extensions, "sni_hostname": pin.host}
        return httpx2.Request(
            request.method, pinned, headers=request.headers, content=request.content, extensions=extensions
        )

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
        current = self._current_issuer()
        if (trusted := self._trusted_issuer()) is not None:
            if not issuers_match(current, trusted):
                raise self._untrusted(current, trusted)
        elif self._secret and self._unattended and origin_of(current)[:2] != origin_of(self.context.server_url)[:2]:
            raise ServerAuthError(
                f"The MCP server names the authorization server {current}, on another host than its own, and no "
                f"issuer is set; knime-mcp did not send it {self._secret}.",
                server=self._server,
                hint=f"If {current} is this MCP server's authorization server (see the server's documentation), set "
                f"'Authorization server (issuer)' to {current} (--issuer {current}).",
            )

    def _remember_issuer(self) -> None:
        if self._secret and self._issuer is None and self._store is not None and not self._store.confirmed_issuer():
            self._store.confirm_issuer(self._current_issuer())

    def _untrusted(self, named: str, trusted: str) -> ServerAuthError:
        withheld = f"did not send it {self._secret}" if self._secret else "did not sign in there"
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
