"""The transport layer: turns a ServerSpec into the SDK's (read, write) streams. Only this module knows about URLs,
commands and the ``auto`` choice; the client above it sees streams, never sockets or processes.

Every HTTP session borrows one connection pool (:class:`HttpPool`): creating an SDK HTTP client with its own TLS
context costs tens of milliseconds, a client over a shared transport costs microseconds.
"""

from __future__ import annotations

import json
import tempfile
import urllib.request
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import partial
from types import TracebackType
from typing import IO, Any, Generic, Literal, Self, TypeVar
from urllib.parse import urlsplit

import anyio
import httpx2
import mcp.client.sse
from mcp.client._transport import ReadStream, TransportStreams, WriteStream
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse
from pydantic import ValidationError

from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.legacy_sse import RefusalAnswer, answering_refusals, bounded_events
from knime_mcp.stdin_watch import watching_stdin
from knime_mcp.urlguard import PinnedHost

__all__ = [
    "AUTH_STATUSES",
    "CALL_KEY",
    "MAX_MESSAGE_BYTES",
    "ConcreteTransport",
    "Diagnostics",
    "HttpPool",
    "candidate_transports",
    "open_transport",
]

ConcreteTransport = Literal["streamable-http", "sse", "stdio"]

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The largest message a server may send in one server-sent event (SSE, and Streamable HTTP answering with an event
stream): the SDK's default of 1 MiB loses any larger tool result, and with it the session."""

FALLBACK_STATUSES = frozenset({400, 404, 405})
"""Answers of a server that does not speak Streamable HTTP at a URL, after which ``auto`` tries SSE; never when the
server asked for authentication (:attr:`Diagnostics.challenge`)."""

AUTH_STATUSES = frozenset({401, 403})
"""Answers that ask for (other) credentials: they stop the ``auto`` fallback and no later status hides them."""


def candidate_transports(spec: ServerSpec) -> Sequence[ConcreteTransport]:
    """The transports to try, in order, for the spec's transport setting."""
    match spec.transport:
        case "auto" if not spec.is_url:
            return ("stdio",)
        case "auto" if urlsplit(spec.target).path.rstrip("/").endswith("/sse"):
            return ("sse",)
        case "auto":
            return ("streamable-http", "sse")
        case kind:
            return (kind,)


class _BorrowedTransport(httpx2.AsyncBaseTransport):
    """Sends through the pool's transports; closing a borrowing client leaves the pool open.

    With a ``pin``, every request goes to the pinned address, with the host name kept in the Host header and in
    TLS (server name and certificate check), so the connection cannot follow a later DNS answer elsewhere. The SDK
    keeps a session's requests on the endpoint's origin, so no request is for another host.
    """

    def __init__(self, pool: HttpPool, pin: PinnedHost | None = None, diagnostics: Diagnostics | None = None) -> None:
        self._pool = pool
        self._pin = pin
        self._diagnostics = diagnostics

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        transport = self._pool.route(request.url)
        if self._pin is not None:
            request.url = request.url.copy_with(host=self._pin.address)
            request.extensions = {**request.extensions, "sni_hostname": self._pin.host}
        try:
            return await transport.handle_async_request(request)
        except httpx2.TransportError:
            if self._diagnostics is not None:
                await self._diagnostics.record_failure(request)
            raise

    async def aclose(self) -> None:
        return None


class HttpPool:
    """One connection pool for every HTTP session of a run, and one per proxy in use; whoever creates it closes it.

    A client given its own transport no longer reads proxy settings, so the pool does, as httpx and
    :mod:`urllib.request` do: ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` (and the system proxy
    on Windows and macOS; only ``NO_PROXY`` lists exceptions).
    """

    def __init__(self) -> None:
        self._direct = httpx2.AsyncHTTPTransport()
        self._proxy_settings = urllib.request.getproxies()
        self._proxied: dict[str, httpx2.AsyncHTTPTransport] = {}

    def route(self, url: httpx2.URL) -> httpx2.AsyncBaseTransport:
        """The transport for a request to ``url``: direct, or through the proxy the settings name for it."""
        proxy = self._proxy_settings.get(url.scheme) or self._proxy_settings.get("all")
        if not proxy or urllib.request.proxy_bypass_environment(url.host, self._proxy_settings):
            return self._direct
        proxy = proxy if "://" in proxy else f"http://{proxy}"
        if proxy not in self._proxied:
            self._proxied[proxy] = httpx2.AsyncHTTPTransport(proxy=proxy)
        return self._proxied[proxy]

    def client(
        self,
        headers: dict[str, str] | None = None,
        timeout: httpx2.Timeout | None = None,
        auth: httpx2.Auth | None = None,
        *,
        diagnostics: Diagnostics | None = None,
        pin: PinnedHost | None = None,
    ) -> httpx2.AsyncClient:
        """A cheap client over the shared pool (the SDK's ``McpHttpClientFactory`` shape)."""
        hooks = (
            {"request": [diagnostics.record_request], "response": [diagnostics.record_response]} if diagnostics else {}
        )
        return httpx2.AsyncClient(
            headers=headers,
            timeout=timeout,
            auth=auth,
            event_hooks=hooks,
            transport=_BorrowedTransport(self, pin, diagnostics),
        )

    async def aclose(self) -> None:
        for transport in (self._direct, *self._proxied.values()):
            await transport.aclose()


class Diagnostics:
    """What a connection attempt left behind for its error message: a stdio server's stderr, the last HTTP error.

    The SDK turns HTTP statuses into generic JSON-RPC errors, so a response hook keeps the status itself.
    """

    def __init__(self) -> None:
        self._stderr: IO[str] | None = None
        self._auth_answer = False
        self.http_status: int | None = None
        """The last HTTP error status, except that an authentication answer (401, 403 or any status with a
        ``WWW-Authenticate`` challenge) is kept: a later refusal (a 400 to the next handshake request) must not turn
        "sign in first" into "this URL does not speak MCP"."""
        self.challenge: str | None = None
        """The ``WWW-Authenticate`` header of the first authentication answer, e.g. ``Bearer resource_metadata=…``."""
        self.malformed: str | None = None
        """The first message that was not valid JSON-RPC, shortened."""
        self.refused_calls: dict[str, tuple[int, float | None]] = {}
        """HTTP status and Retry-After seconds of refused requests, by the call key stamped in their ``_meta``."""
        self.unmatched_id: str | None = None
        """The first response id that matches no request sent on the session, shortened."""
        self.sent_calls: set[str] = set()
        """Call keys of the requests that may have reached the server: over stdio from when the request is handed
        to the writer, unless the write fails; over HTTP from when its headers start to go out. A request whose
        session ends before then never ran. The client forgets each key once its request is settled."""
        self.ended = False
        """Whether the transport ended under the session: its read stream closed, or it took no more writes."""
        self.answer_refused: RefusalAnswer | None = None
        """Set where the transport does not answer a refused or failed request itself (legacy SSE)."""

    async def record_response(self, response: httpx2.Response) -> None:
        if response.status_code < 400:
            return
        if not self.asked_for_auth:
            self.http_status = response.status_code
            challenge = response.headers.get("WWW-Authenticate")
            if challenge is not None or response.status_code in AUTH_STATUSES:
                self.challenge = challenge
                self._auth_answer = True
        body = _body(response.request)
        if (key := _call_key_in(body)) is not None:
            self.refused_calls[key] = (response.status_code, _retry_after(response))
        await self._answer(body, response.status_code)

    async def record_failure(self, request: httpx2.Request) -> None:
        """A request whose connection failed before its response arrived."""
        await self._answer(_body(request), None)

    async def _answer(self, body: object, status: int | None) -> None:
        if self.answer_refused is not None and isinstance(body, dict) and "method" in body and "id" in body:
            await self.answer_refused(body["id"], status)

    def never_sent(self, key: str | None) -> bool:
        """Whether the request with this call key, unanswered when its session ended, provably never reached the
        server (see :attr:`sent_calls`); ask only once the session's transport has closed."""
        return key is not None and key not in self.sent_calls

    def undelivered(self, message: bytes) -> None:
        """A message written to a stdio server did not get through."""
        try:
            key = _call_key_in(json.loads(message))
        except ValueError:
            return
        self.sent_calls.discard(key or "")

    def forget(self, key: str | None) -> None:
        """Drop a settled request's key, so a long session does not collect them."""
        self.sent_calls.discard(key or "")

    async def record_request(self, request: httpx2.Request) -> None:
        """Watch the request go out, so that one cut off before it was written counts as never sent."""
        key = _call_key_in(_body(request))
        if key is None:
            return
        outer = request.extensions.get("trace")

        async def trace(event: str, info: dict[str, Any]) -> None:
            if event.endswith("send_request_headers.started"):
                self.sent_calls.add(key)
            if outer is not None:
                await outer(event, info)

        request.extensions = {**request.extensions, "trace": trace}

    @property
    def asked_for_auth(self) -> bool:
        """Whether the server answered that it wants authentication: ``auto`` must not try another transport."""
        return self._auth_answer

    async def record_message(self, message: object) -> None:
        """The SDK's message handler: it hands over frames it could not parse as exceptions."""
        if isinstance(message, Exception) and self.malformed is None:
            errors = message.errors() if isinstance(message, ValidationError) else []
            received = errors[0].get("input") if errors else None
            self.malformed = f"received {str(received)[:80]!r}" if received is not None else type(message).__name__

    def no_answer_hint(self, usual: str) -> str:
        """The hint for a request that got no answer: ``usual``, unless the server answered under a wrong id."""
        if self.unmatched_id is None:
            return usual
        return (
            f"The server did send a response, but with the id {self.unmatched_id!r}, which matches no request it "
            "was sent: it does not follow MCP. Report this to the server's maintainers."
        )

    def errlog(self) -> IO[str]:
        """Where a stdio server's stderr goes; made on first use, as HTTP sessions have none."""
        if self._stderr is None:
            self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        return self._stderr

    def stderr_tail(self, lines: int = 8) -> str:
        if self._stderr is None:
            return ""
        self._stderr.flush()
        self._stderr.seek(0)
        text = self._stderr.read()[-4000:]
        return "\n".join(text.strip().splitlines()[-lines:])

    def close(self) -> None:
        if self._stderr is not None:
            self._stderr.close()


CALL_KEY = "io.github.knime-mcp/call"
"""A ``_meta`` entry on each request, so what the transport saw of it (a refused HTTP request, a failed write) can be
matched to the call that sent it."""


def _body(request: httpx2.Request) -> object:
    """The request's JSON body, or None."""
    try:
        return json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return None


def _call_key_in(body: object) -> str | None:
    params = body.get("params") if isinstance(body, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    key = meta.get(CALL_KEY) if isinstance(meta, dict) else None
    return key if isinstance(key, str) else None


def _retry_after(response: httpx2.Response) -> float | None:
    """Retry-After in seconds; the HTTP-date form counts as absent."""
    try:
        return max(float(response.headers["Retry-After"]), 0.0)
    except (KeyError, ValueError):
        return None


def _http_timeout(spec: ServerSpec) -> httpx2.Timeout:
    # Reads stay unbounded here: a call's own timeout (in the session) bounds each request, and SSE streams idle.
    return httpx2.Timeout(spec.timeouts.connect, read=None)


@asynccontextmanager
async def open_transport(
    spec: ServerSpec,
    kind: ConcreteTransport,
    *,
    headers: dict[str, str],
    env: dict[str, str],
    pool: HttpPool,
    diagnostics: Diagnostics,
    pin: PinnedHost | None = None,
) -> AsyncIterator[TransportStreams]:
    """Open one concrete transport to the server; resolved secrets arrive as arguments and are never stored.
    ``pin``: the checked address of a server from data, which every HTTP request goes to."""
    match kind:
        case "stdio":
            command = spec.command
            if not command:
                raise ConfigError("The stdio command line is empty.", server=spec.display_name)
            params = StdioServerParameters(command=command[0], args=command[1:], env=env or None, cwd=spec.cwd)
            with watching_stdin(diagnostics.undelivered):
                async with stdio_client(params, errlog=diagnostics.errlog()) as streams:
                    yield _watch_ids(streams, diagnostics, written_when_handed=True)
        case "streamable-http":
            async with (
                pool.client(headers=headers, timeout=_http_timeout(spec), diagnostics=diagnostics, pin=pin) as http,
                streamable_http_client(spec.target, http_client=http, max_sse_event_size=MAX_MESSAGE_BYTES) as streams,
            ):
                yield _watch_ids(streams, diagnostics)
        case "sse":
            async with sse_client(
                spec.target,
                headers=headers,
                timeout=spec.timeouts.connect,
                sse_read_timeout=_SSE_IDLE_SECONDS,
                httpx_client_factory=partial(pool.client, diagnostics=diagnostics, pin=pin),
            ) as streams, answering_refusals(streams) as (answered, answer):
                diagnostics.answer_refused = answer
                yield _watch_ids(answered, diagnostics)


# ``sse_client`` takes no event limit and opens its stream through this name of its module, so the limit is set there.
mcp.client.sse.sse_within_origin = bounded_events(mcp.client.sse.sse_within_origin, lambda: MAX_MESSAGE_BYTES)

_SSE_IDLE_SECONDS = 3600.0
"""How long an SSE stream may stay silent; long-running tools keep it idle between events."""


def _watch_ids(
    streams: TransportStreams, diagnostics: Diagnostics, *, written_when_handed: bool = False
) -> TransportStreams:
    """The streams, noting a response whose id matches no request sent (the SDK drops such a response quietly, and
    the request it was meant for would look merely slow); with ``written_when_handed``, a request handed to the
    transport counts as sent (:attr:`Diagnostics.sent_calls`)."""
    read, write = streams
    pending: set[str] = set()
    writes = _WatchedWrites(write, pending, diagnostics, written_when_handed=written_when_handed)
    return _WatchedReads(read, pending, diagnostics), writes


_Stream = TypeVar("_Stream", ReadStream[SessionMessage | Exception], WriteStream[SessionMessage])


class _Delegating(Generic[_Stream]):
    """Closing and the ``async with`` protocol, passed on to the wrapped stream."""

    def __init__(self, stream: _Stream) -> None:
        self._stream = stream

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> Self:
        await self._stream.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return await self._stream.__aexit__(exc_type, exc, tb)


class _WatchedReads(_Delegating[ReadStream[SessionMessage | Exception]]):
    def __init__(
        self, stream: ReadStream[SessionMessage | Exception], pending: set[str], diagnostics: Diagnostics
    ) -> None:
        super().__init__(stream)
        self._pending = pending
        self._diagnostics = diagnostics

    @property
    def last_context(self) -> object:
        """The SDK reads the sender's context from the stream it is given, if the stream keeps one."""
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return self._note(await self._stream.receive())
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._diagnostics.ended = True
            raise

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return self._note(await self._stream.__anext__())
        except (StopAsyncIteration, anyio.ClosedResourceError):
            self._diagnostics.ended = True
            raise

    def _note(self, item: SessionMessage | Exception) -> SessionMessage | Exception:
        if isinstance(item, SessionMessage) and isinstance(item.message, JSONRPCResponse | JSONRPCError):
            key = str(item.message.id)
            if key in self._pending:
                self._pending.discard(key)
            elif item.message.id is not None and self._diagnostics.unmatched_id is None:
                self._diagnostics.unmatched_id = key[:40]
        return item


class _WatchedWrites(_Delegating[WriteStream[SessionMessage]]):
    def __init__(
        self,
        stream: WriteStream[SessionMessage],
        pending: set[str],
        diagnostics: Diagnostics,
        *,
        written_when_handed: bool,
    ) -> None:
        super().__init__(stream)
        self._pending = pending
        self._diagnostics = diagnostics
        self._written_when_handed = written_when_handed

    async def send(self, item: SessionMessage, /) -> None:
        key = None
        if isinstance(item.message, JSONRPCRequest):
            self._pending.add(str(item.message.id))
            key = _call_key_in({"params": item.message.params}) if self._written_when_handed else None
        if key is not None:
            self._diagnostics.sent_calls.add(key)
        try:
            await self._stream.send(item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            # The transport's writer is gone: this request was never handed over, and no later one will be.
            self._diagnostics.sent_calls.discard(key or "")
            self._diagnostics.ended = True
            raise
