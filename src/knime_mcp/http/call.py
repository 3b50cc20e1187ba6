"""Calls of HTTP tools: one :class:`HttpToolClient` per API (or webhook) for a run, over the run's connection pool.

It sits where :class:`~knime_mcp.mcp.client.McpClient` sits for MCP servers, below the dispatcher, which validates
arguments, retries and logs for both kinds; above it sit :mod:`~knime_mcp.http.request` (arguments to a request) and
:mod:`~knime_mcp.http.response` (a response to a result). It keeps what an MCP client keeps: the authentication
(resolved once), the concurrency limit, a circuit breaker, the pinned address of an API from data, and the secrets
to mask in every result and error.

A redirect is followed as :mod:`~knime_mcp.http.redirects` says (within the origin, at most three), the API key of a
query sent again; a response past the spec's ``max_response_bytes`` is a :class:`ToolCallError` saying how to raise
it. A 429 or 5xx answer is raised as :class:`BusyResponse`, a :class:`ServerBusyError` carrying the error result, so
that the dispatcher retries it as it retries an MCP server's, and hands on the result when it does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import anyio
import httpx2

from knime_mcp.config import (
    OAUTH_KINDS,
    CredentialLookup,
    ServerSpec,
    resolve_headers,
    resolve_query,
    resolve_target,
    resolved_secrets,
)
from knime_mcp.errors import (
    ConfigError,
    McpToolError,
    OutcomeUnknownError,
    ServerBusyError,
    ServerConnectError,
    ToolCallError,
    ToolTimeoutError,
    masked,
    translate,
)
from knime_mcp.http.redirects import REDIRECT_STATUSES, next_request
from knime_mcp.http.request import NO_BODY, HttpRequest, build_request
from knime_mcp.http.response import error_result, success_result
from knime_mcp.net.breaker import Circuit, CircuitBreaker
from knime_mcp.net.http_pool import MAX_MESSAGE_BYTES, HttpPool, read_bounded, text_encoding
from knime_mcp.net.retry_after import retry_after
from knime_mcp.net.urlguard import PinnedHost
from knime_mcp.tools.http_operation import HttpOperation
from knime_mcp.tools.results import ToolResult

__all__ = ["SAFE_METHODS", "BusyResponse", "HttpToolClient", "http_retry_safe"]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing on the server (RFC 9110), so a call may be repeated."""

_IDEMPOTENT_METHODS = frozenset({"PUT", "DELETE"})
"""Methods whose repeats change no more than the first call, when the tool is annotated so: a PUT or DELETE may
still do more (a DELETE that archives a numbered version)."""


def http_retry_safe(operation: HttpOperation, idempotent: bool) -> bool:
    """Whether a failed call may be sent again: a safe method, or a PUT or DELETE annotated idempotent; never a POST
    or PATCH, whatever its annotations say."""
    return operation.method in SAFE_METHODS or (operation.method in _IDEMPOTENT_METHODS and idempotent)


class BusyResponse(ServerBusyError):
    """A 429 or 5xx answer: retried where the call is safe to repeat, else (or at the end) its :attr:`result`."""

    def __init__(self, result: ToolResult, status: int, retry_after: float | None, *, server: str) -> None:
        super().__init__(status, retry_after, server=server)
        self.result = result


class HttpToolClient:
    """One API's calls for a run: ``open`` once, ``call`` from any task, ``aclose`` at the end."""

    def __init__(
        self,
        spec: ServerSpec,
        http: httpx2.AsyncClient,
        query: Mapping[str, str],
        secrets: frozenset[str],
        *,
        max_concurrency: int,
        breaker: CircuitBreaker,
    ) -> None:
        self.spec = spec
        target = urlsplit(resolve_target(spec))
        self._target = target._replace(query="")
        self._http = http
        self._query = (*parse_qsl(target.query, keep_blank_values=True), *query.items())
        """The URL's own query, its ``${VAR}``\ s resolved (a webhook's token), and the API key's: sent as parameters,
        since httpx replaces a URL's query with the parameters given; never shown."""
        self._key_query = tuple(query.items())
        """The API key's parameters alone: sent again after a redirect (always within the origin)."""
        self._max_bytes = spec.max_response_bytes or MAX_MESSAGE_BYTES
        self._secrets = secrets
        self._limiter = anyio.CapacityLimiter(max_concurrency)
        self._circuit = Circuit(breaker)

    @classmethod
    def open(
        cls,
        spec: ServerSpec,
        pool: HttpPool,
        *,
        credentials: CredentialLookup | None,
        pin: PinnedHost | None,
        max_concurrency: int,
        breaker: CircuitBreaker,
    ) -> HttpToolClient:
        """Resolve the authentication (a missing variable or credential fails now, once) and borrow the pool.
        ``pin``: the address :mod:`knime_mcp.net.urlguard` checked for an API from data; every request goes there."""
        if spec.auth.kind in OAUTH_KINDS:
            raise ConfigError(
                "HTTP tools cannot sign in with OAuth.",
                server=spec.display_name,
                hint="Use a bearer token, a header, basic or query authentication with a key the API issued.",
            )
        headers = resolve_headers(spec, credentials)
        timeout = httpx2.Timeout(spec.timeouts.connect, read=None)
        http = pool.client(
            headers=headers, timeout=timeout, pin=pin, tls=spec.tls, credentials=credentials, server=spec.display_name
        )
        secrets = resolved_secrets(spec, credentials)
        query = resolve_query(spec, credentials)
        return cls(spec, http, query, secrets, max_concurrency=max_concurrency, breaker=breaker)

    @property
    def server(self) -> str:
        return self.spec.display_name

    async def aclose(self) -> None:
        await self._http.aclose()

    async def call(
        self, tool_name: str, operation: HttpOperation, arguments: Mapping[str, Any], *, timeout: float | None = None
    ) -> ToolResult:
        """One request; calls beyond the concurrency limit wait. Secrets are masked in the result and any error."""
        request = build_request(operation, arguments)
        self._circuit.check()
        try:
            async with self._limiter:
                result = await self._send(tool_name, request, timeout or self.spec.timeouts.call)
        except McpToolError as exc:
            if isinstance(exc, ServerConnectError):
                self._circuit.failed(exc)
            masked(exc, self._secrets)
            raise
        self._circuit.succeeded()
        return result

    async def _send(self, tool_name: str, request: HttpRequest, seconds: float) -> ToolResult:
        path = self._target.path.rstrip("/") + request.path if request.path else self._target.path
        url = urlunsplit(self._target._replace(path=path))
        outgoing = self._request(request, request.method, url, [*self._query, *request.query], request.body)
        try:
            with anyio.fail_after(seconds):
                response = await self._follow(outgoing, request, url)
                try:
                    body = await read_bounded(response, self._max_bytes, lambda: _too_large(response, self._max_bytes))
                finally:
                    await response.aclose()
        except TimeoutError as exc:
            raise ToolTimeoutError(
                f"Tool {tool_name!r} did not answer within {seconds:g} s; the request was cancelled.",
                server=self.server,
                hint="Raise the call timeout if the API is slow.",
            ) from exc
        except (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout) as exc:
            raise translate(exc, self.server) from exc
        except httpx2.TransportError as exc:
            raise OutcomeUnknownError(
                f"The connection was lost during the call of tool {tool_name!r}; it may or may not have run "
                f"({exc or type(exc).__name__}).",
                server=self.server,
                hint="Check the call's effect before calling it again.",
            ) from exc
        return self._result(request, response, body)

    def _request(
        self, request: HttpRequest, method: str, url: str, params: list[tuple[str, str]], body: Any
    ) -> httpx2.Request:
        return self._http.build_request(
            method, url, params=params, headers=dict(request.headers), **({} if body is NO_BODY else {"json": body})
        )

    async def _follow(self, outgoing: httpx2.Request, request: HttpRequest, url: str) -> httpx2.Response:
        """The streamed response at the end of the redirects the call may follow; ``url``: the first request's,
        without its query (the pinned address, if any, is the transport's business)."""
        method, body, followed = request.method, request.body, 0
        while True:
            response = await self._http.send(outgoing, stream=True)
            location = response.headers.get("Location")
            if response.status_code not in REDIRECT_STATUSES or location is None:
                return response
            await response.aclose()
            redirect = next_request(response.status_code, location, url, method, followed)
            followed += 1
            parts = urlsplit(redirect.url)
            query = parse_qsl(parts.query, keep_blank_values=True)
            given = {name for name, _ in query}
            params = [*query, *((name, value) for name, value in self._key_query if name not in given)]
            url, method = urlunsplit(parts._replace(query="")), redirect.method
            body = body if redirect.keeps_body else NO_BODY
            outgoing = self._request(request, method, url, params, body)

    def _result(self, request: HttpRequest, response: httpx2.Response, body: bytes) -> ToolResult:
        """The response as a result, secrets masked (an API may echo the key it was sent)."""
        status, content_type = response.status_code, response.headers.get("Content-Type")
        encoding = text_encoding(response)
        if response.is_success:
            return success_result(status, content_type, body, encoding).masked(self._secrets)
        result = error_result(status, response.reason_phrase, request, content_type, body, encoding)
        result = result.masked(self._secrets)
        if status == 429 or status >= 500:
            raise BusyResponse(result, status, retry_after(response.headers), server=self.server)
        return result


def _too_large(response: httpx2.Response, limit: int) -> ToolCallError:
    """A body past the tool's largest response (by default :data:`~knime_mcp.config.limits.MAX_MESSAGE_BYTES`, the
    limit an MCP result has too); its size named when the response said it (and was not compressed)."""
    length = response.headers.get("Content-Length", "")
    size = f" ({int(length):,} bytes)" if length.isdigit() and "Content-Encoding" not in response.headers else ""
    return ToolCallError(
        f"The API's response{size} is larger than the largest response knime-mcp reads for this tool "
        f"({_amount(limit)}); the call ran, but its result is lost.",
        hint="Raise Largest response (MB) in the HTTP Tool Provider (--max-response-mb in knime-mcp), or ask the API "
        "for less at a time (a filter, a page, a smaller range).",
    )


def _amount(size: int) -> str:
    """MB as the settings count them (2**20 bytes), or bytes below one."""
    return f"{size / 2**20:g} MB" if size >= 2**20 else f"{size:,} bytes"
