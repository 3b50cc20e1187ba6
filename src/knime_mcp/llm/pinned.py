"""The HTTP clients of a chat model whose endpoint came from data: a Base URL a flow variable set may point at a cloud
metadata service or an admin console on the local network, so it is treated as a server from data is.

Layer: wire, below :mod:`knime_mcp.llm.providers`, above the SSRF guard of :mod:`knime_mcp.net.urlguard`.
:func:`checked_endpoint` runs the guard once, when the model is built: http(s) only, every address of the host public.
The transports of :func:`pinned_transports` send every request to the address it checked (so a second DNS answer
cannot lead elsewhere), with the host name kept in the Host header and in TLS, refuse a request for another host (a
redirect), and strip every header that carries a provider's key, so that no key reaches the endpoint, not even one an
integration reads from the environment (``OLLAMA_API_KEY``). They connect directly, not through a proxy.

    pin = checked_endpoint("https://models.example.com/v1", hint="... switch on 'Trust ...'")
    sync, asynchronous = pinned_transports(pin)       # for httpx.Client(transport=sync), ...
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial

import anyio
import httpx

from knime_mcp.net.urlguard import PinnedHost, check_url

__all__ = ["checked_endpoint", "pinned_clients", "pinned_transports"]

_KEY_HEADERS = ("authorization", "api-key", "x-api-key", "x-goog-api-key")
"""The headers the providers take a key in (see :mod:`knime_mcp.llm.providers`)."""


def checked_endpoint(url: str, hint: str) -> PinnedHost:
    """The SSRF guard's pin for ``url``, or its ConfigError with ``hint``; callable from any thread, one running an
    event loop too (the guard runs on a loop of its own, in a thread of its own)."""
    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(anyio.run, partial(check_url, url, hint=hint)).result()


def pinned_transports(pin: PinnedHost) -> tuple[httpx.BaseTransport, httpx.AsyncBaseTransport]:
    """The transports, synchronous and asynchronous, of clients whose requests all go to ``pin`` (see the module
    docstring)."""
    return _PinnedTransport(pin), _AsyncPinnedTransport(pin)


def pinned_clients(pin: PinnedHost, timeout: float) -> tuple[httpx.Client, httpx.AsyncClient]:
    """Clients, synchronous and asynchronous, over :func:`pinned_transports`, for an integration that takes clients
    (openai's)."""
    sync, asynchronous = pinned_transports(pin)
    return httpx.Client(transport=sync, timeout=timeout), httpx.AsyncClient(transport=asynchronous, timeout=timeout)


def _pinned(pin: PinnedHost, request: httpx.Request) -> httpx.Request:
    """``request`` sent to the checked address without a key; an error for a request to another host."""
    if request.url.host != pin.host:
        raise httpx.ConnectError(
            f"A request of the chat model for {request.url.host} was refused: a Base URL taken from data leads only "
            f"to {pin.host}.",
            request=request,
        )
    for name in _KEY_HEADERS:
        request.headers.pop(name, None)
    request.url = request.url.copy_with(host=pin.address)
    request.extensions = {**request.extensions, "sni_hostname": pin.host}
    return request


class _PinnedTransport(httpx.BaseTransport):
    def __init__(self, pin: PinnedHost) -> None:
        self._pin = pin
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._inner.handle_request(_pinned(self._pin, request))

    def close(self) -> None:
        self._inner.close()


class _AsyncPinnedTransport(httpx.AsyncBaseTransport):
    def __init__(self, pin: PinnedHost) -> None:
        self._pin = pin
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._inner.handle_async_request(_pinned(self._pin, request))

    async def aclose(self) -> None:
        await self._inner.aclose()
