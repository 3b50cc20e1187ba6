"""One HTTP connection pool for a run's sessions and requests, and reading a response body within a limit.

Creating an HTTP client with its own TLS context costs tens of milliseconds, a client over a shared transport costs
microseconds, so every MCP session (:mod:`knime_mcp.mcp.transports`), HTTP tool call (:mod:`knime_mcp.http.call`)
and document read borrows the pool of its run. A server with TLS settings of its own (:mod:`knime_mcp.net.tls`) gets
a transport per distinct setting; every server with the default ones shares one. Below both: it knows HTTP, not MCP
or OpenAPI.
"""

from __future__ import annotations

import codecs
import ssl
import urllib.request
from collections.abc import Callable

import httpx2

from knime_mcp.config import DEFAULT_TLS, CredentialLookup, TlsSettings
from knime_mcp.config.limits import MAX_MESSAGE_BYTES
from knime_mcp.net.library_logs import mask_library_logs
from knime_mcp.net.tls import ssl_context
from knime_mcp.net.urlguard import PinnedHost

__all__ = ["MAX_MESSAGE_BYTES", "HttpPool", "ResponseWatch", "read_bounded", "text_encoding"]

ResponseWatch = Callable[[httpx2.Request, httpx2.Response], None]
"""Told of each response as it arrives, before its body is read (an MCP session bounds and tracks bodies)."""


async def read_bounded(response: httpx2.Response, limit: int, too_large: Callable[[], Exception]) -> bytes:
    """A streamed response's body as it was sent (a gzip or deflate encoding undone, so the limit bounds memory, not
    the wire), given up on once it passes ``limit`` bytes, whatever its Content-Length says: ``too_large()`` is
    raised. For every body knime-mcp reads whole outside the SDK: documents, HTTP tools' answers, OAuth answers."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise too_large()
        chunks.append(chunk)
    return b"".join(chunks)


def text_encoding(response: httpx2.Response) -> str:
    """The response's charset if Python knows it, else UTF-8 (a server may name any charset)."""
    try:
        return codecs.lookup(response.charset_encoding or "utf-8").name
    except LookupError:
        return "utf-8"


class _BorrowedTransport(httpx2.AsyncBaseTransport):
    """Sends through the pool's transports; closing a borrowing client leaves the pool open.

    With a ``pin``, every request goes to the pinned address, with the host name kept in the Host header and in
    TLS (server name and certificate check), so the connection cannot follow a later DNS answer elsewhere. The SDK
    keeps a session's requests on the endpoint's origin, so no request is for another host.
    """

    def __init__(
        self,
        pool: HttpPool,
        pin: PinnedHost | None = None,
        on_response: ResponseWatch | None = None,
        tls: TlsSettings = DEFAULT_TLS,
    ) -> None:
        self._pool = pool
        self._pin = pin
        self._on_response = on_response
        self._tls = tls

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        transport = self._pool.route(request.url, self._tls)
        if self._pin is not None:
            request.url = request.url.copy_with(host=self._pin.address)
            request.extensions = {**request.extensions, "sni_hostname": self._pin.host}
        response = await transport.handle_async_request(request)
        if self._on_response is not None:
            self._on_response(request, response)
        return response

    async def aclose(self) -> None:
        return None


class HttpPool:
    """One connection pool for every HTTP session of a run, and one per proxy and per TLS setting in use; whoever
    creates it closes it.

    A client given its own transport no longer reads proxy settings, so the pool does, as httpx and
    :mod:`urllib.request` do: ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` (and the system proxy
    on Windows and macOS; only ``NO_PROXY`` lists exceptions).

    The default TLS context (tens of milliseconds of CPU) is built on the first https request, so a pool made for
    servers on plain http (a local server, a test) never builds one; plain http requests go through a transport of
    their own, whose context trusts nothing, as nothing of theirs is encrypted.
    """

    def __init__(self) -> None:
        mask_library_logs()  # httpx logs every request's URL, an API key in the query included
        self._proxy_settings = urllib.request.getproxies()
        self._contexts: dict[TlsSettings, ssl.SSLContext] = {}
        self._transports: dict[tuple[str | None, TlsSettings | None], httpx2.AsyncHTTPTransport] = {}

    def route(self, url: httpx2.URL, tls: TlsSettings = DEFAULT_TLS) -> httpx2.AsyncBaseTransport:
        """The transport for a request to ``url`` under ``tls`` (whose context :meth:`transport` built, unless it is
        the default): direct, or through the proxy the settings name for it."""
        proxy = self._proxy_settings.get(url.scheme) or self._proxy_settings.get("all")
        if not proxy or urllib.request.proxy_bypass_environment(url.host, self._proxy_settings):
            proxy = None
        elif "://" not in proxy:
            proxy = f"http://{proxy}"
        encrypted = tls if url.scheme == "https" else None  # only https uses the context (a proxy's TLS has its own)
        if (transport := self._transports.get((proxy, encrypted))) is None:
            if encrypted is None:
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # checks certificates, trusting none: never used
            elif (context := self._contexts.get(encrypted)) is None:
                context = self._contexts[encrypted] = ssl_context(encrypted, None, "")  # the default settings
            transport = self._transports[proxy, encrypted] = httpx2.AsyncHTTPTransport(verify=context, proxy=proxy)
        return transport

    def transport(
        self,
        pin: PinnedHost | None = None,
        on_response: ResponseWatch | None = None,
        *,
        tls: TlsSettings = DEFAULT_TLS,
        credentials: CredentialLookup | None = None,
        server: str = "",
    ) -> httpx2.AsyncBaseTransport:
        """A transport over the shared pool for a client of one's own making; ``pin``: see :class:`_BorrowedTransport`,
        ``on_response``: told of each response before its body is read; ``tls``: the server's settings, whose context
        is built now (a missing file or wrong passphrase fails here, naming ``server``), once per run; the default
        settings' context on the first https request, as they need no file."""
        if tls != DEFAULT_TLS and tls not in self._contexts:
            self._contexts[tls] = ssl_context(tls, credentials, server)
        return _BorrowedTransport(self, pin, on_response, tls)

    def client(
        self,
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
        *,
        pin: PinnedHost | None = None,
        tls: TlsSettings = DEFAULT_TLS,
        credentials: CredentialLookup | None = None,
        server: str = "",
    ) -> httpx2.AsyncClient:
        """A cheap client over the shared pool (the SDK's ``McpHttpClientFactory`` shape); see :meth:`transport`."""
        transport = self.transport(pin, tls=tls, credentials=credentials, server=server)
        return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth, transport=transport)

    async def aclose(self) -> None:
        for transport in self._transports.values():
            await transport.aclose()

    async def __aenter__(self) -> HttpPool:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
