"""The transport layer: turns a ServerSpec into the SDK's (read, write) streams. Only this module knows about URLs,
commands and the ``auto`` choice; the client above it sees streams, never sockets or processes.

Every HTTP session borrows its run's connection pool (:class:`~knime_mcp.net.http_pool.HttpPool`) through a client
that reports to the session's diagnostics.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from functools import partial
from typing import Any, Literal, NoReturn
from urllib.parse import urlsplit

import anyio
import httpx2
import mcp.client.sse
import mcp.client.stdio
from anyio.abc import ByteReceiveStream
from anyio.streams.text import TextReceiveStream
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from knime_mcp.config import CredentialLookup, ServerSpec, resolve_target
from knime_mcp.errors import ConfigError
from knime_mcp.mcp.diagnostics import Diagnostics
from knime_mcp.mcp.legacy_sse import bounded_events, ending_on_refusal
from knime_mcp.mcp.programs import check_program
from knime_mcp.mcp.stdin_watch import watching_stdin
from knime_mcp.mcp.stream_watch import watch_streams
from knime_mcp.net.http_pool import MAX_MESSAGE_BYTES, HttpPool
from knime_mcp.net.library_logs import mask_library_logs
from knime_mcp.net.urlguard import PinnedHost

__all__ = ["ConcreteTransport", "candidate_transports", "open_transport"]

ConcreteTransport = Literal["streamable-http", "sse", "stdio"]

FALLBACK_STATUSES = frozenset({400, 404, 405})
"""Answers of a server that does not speak Streamable HTTP at a URL, after which ``auto`` tries SSE; never when the
server asked for authentication (:attr:`Diagnostics.challenge`)."""


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


class _ReportingClient(httpx2.AsyncClient):
    """Tells a session's diagnostics how each request finally ended, after what its OAuth provider did: a 401 that
    the provider answers with a refresh, or a 403 with a step-up, is no refusal when the retried request succeeds."""

    def __init__(self, diagnostics: Diagnostics, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._diagnostics = diagnostics

    async def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        try:
            response = await super().send(request, **kwargs)
        except Exception as error:
            await self._diagnostics.record_failure(request, error)
            raise
        await self._diagnostics.record_outcome(response)
        return response


def _session_client(
    pool: HttpPool,
    diagnostics: Diagnostics,
    pin: PinnedHost | None,
    spec: ServerSpec,
    credentials: CredentialLookup | None,
    headers: dict[str, str] | None = None,
    timeout: httpx2.Timeout | None = None,
    auth: httpx2.Auth | None = None,
) -> httpx2.AsyncClient:
    """A session's client over the run's pool (the SDK's ``McpHttpClientFactory`` shape), reporting to its
    diagnostics: how each request ended, and each one-message body, bounded by :data:`MAX_MESSAGE_BYTES`."""

    def watch(request: httpx2.Request, response: httpx2.Response) -> None:
        _unpack_here(response)
        diagnostics.watch_body(request, response, limit=MAX_MESSAGE_BYTES)

    hooks = {"request": [diagnostics.record_request], "response": [diagnostics.record_response]}
    transport = pool.transport(pin, watch, tls=spec.tls, credentials=credentials, server=spec.display_name)
    return _ReportingClient(
        diagnostics, event_hooks=hooks, headers=headers, timeout=timeout, auth=auth, transport=transport
    )


def _unpack_here(response: httpx2.Response) -> None:
    """Undo a body's Content-Encoding (gzip, deflate) before the message limit counts it, so that it bounds what is
    held in memory, as over stdio: httpx would undo it only after the count, and a gzip body of 64 KB may unpack to
    64 MB. httpx's own decoding, in pieces of at most 64 KiB, through a response of its own."""
    encoding = response.headers.get("Content-Encoding")
    if encoding is None:
        return
    packed = httpx2.Response(response.status_code, headers={"Content-Encoding": encoding}, stream=response.stream)
    response.stream = _Unpacked(packed)
    del response.headers["Content-Encoding"]


class _Unpacked(httpx2.AsyncByteStream):
    """The body of ``packed`` as it unpacks."""

    def __init__(self, packed: httpx2.Response) -> None:
        self._packed = packed

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for piece in self._packed.aiter_bytes():
            yield piece

    async def aclose(self) -> None:
        await self._packed.aclose()


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
    auth: httpx2.Auth | None = None,
    credentials: CredentialLookup | None = None,
) -> AsyncIterator[TransportStreams]:
    """Open one concrete transport to the server; resolved secrets arrive as arguments and are never stored.
    ``pin``: the checked address of a server from data, which every HTTP request goes to; ``auth``: the OAuth
    provider (:mod:`knime_mcp.auth`) that authorizes every HTTP request; ``credentials``: for the passphrase of the
    server's client key (:mod:`knime_mcp.net.tls`)."""
    mask_library_logs()
    match kind:
        case "stdio":
            command = spec.command
            if not command:
                raise ConfigError("The stdio command line is empty.", server=spec.display_name)
            check_program(command[0], env, spec.display_name)
            params = StdioServerParameters(command=command[0], args=command[1:], env=env or None, cwd=spec.cwd)
            with watching_stdin(diagnostics.undelivered), _reading_lines_for(diagnostics):
                async with stdio_client(params, errlog=diagnostics.errlog()) as streams:
                    yield watch_streams(streams, diagnostics, written_when_handed=True)
        case "streamable-http":
            async with (
                _session_client(
                    pool, diagnostics, pin, spec, credentials, headers=headers, timeout=_http_timeout(spec), auth=auth
                ) as http,
                streamable_http_client(
                    resolve_target(spec), http_client=http, max_sse_event_size=MAX_MESSAGE_BYTES
                ) as streams,
            ):
                yield watch_streams(streams, diagnostics)
        case "sse":
            async with sse_client(
                resolve_target(spec),
                headers=headers,
                timeout=spec.timeouts.connect,
                sse_read_timeout=_SSE_IDLE_SECONDS,
                auth=auth,
                httpx_client_factory=partial(_session_client, pool, diagnostics, pin, spec, credentials),
            ) as streams:
                diagnostics.end_on_refusal = ending_on_refusal(streams)
                yield watch_streams(streams, diagnostics)


# ``sse_client`` takes no event limit and opens its stream through this name of its module, so the limit is set there.
mcp.client.sse.sse_within_origin = bounded_events(mcp.client.sse.sse_within_origin, lambda: MAX_MESSAGE_BYTES)


class _WholeLines(TextReceiveStream):
    """A stdio server's stdout, handed on in whole lines only (the rest of a line is held back until its end comes).

    The SDK's reader joins what it holds of a line with each new chunk and splits the result again, copying and
    rescanning a long line once per 64 KiB read: a 40 MB reply took seconds, quadratic in its size. Given whole lines
    it holds nothing, so reading is linear. Text without a final line end is handed on at the end of the stream,
    where the SDK drops it as before.

    A line longer than :data:`MAX_MESSAGE_BYTES` is dropped and ends the session: stdout is closed, so the SDK stops
    the server, and the requests waiting are told why (:attr:`Diagnostics.cut_off`). Otherwise a server that writes
    without line ends would have the client hold all it writes, for as long as the session lasts."""

    def __init__(self, transport_stream: ByteReceiveStream, encoding: str = "utf-8", errors: str = "strict") -> None:
        super().__init__(transport_stream, encoding, errors)
        self._partial: list[str] = []
        self._held = 0
        self._diagnostics = _READING_FOR.get()

    async def receive(self) -> str:
        while True:
            try:
                data = await self.transport_stream.receive()
            except anyio.EndOfStream:
                rest, self._partial = "".join([*self._partial, self._decoder.decode(b"", final=True)]), []
                if not rest:
                    raise
                return rest
            end = data.rfind(b"\n") + 1
            self._held = len(data) - end if end else self._held + len(data)
            if self._held > MAX_MESSAGE_BYTES:
                await self._give_up()
            chunk = self._decoder.decode(data)
            if not end:
                self._partial.append(chunk)
                continue
            cut = chunk.rfind("\n") + 1
            lines, self._partial = "".join([*self._partial, chunk[:cut]]), [chunk[cut:]] if cut < len(chunk) else []
            return lines

    async def _give_up(self) -> NoReturn:
        self._partial = []
        if self._diagnostics is not None:
            self._diagnostics.cut_off = (
                f"The server wrote more than the {MAX_MESSAGE_BYTES} byte limit ({MAX_MESSAGE_BYTES / 2**20:g} MiB) "
                "without a line end: knime-mcp dropped it and stopped the server"
            )
        await self.transport_stream.aclose()
        raise anyio.EndOfStream


_READING_FOR: ContextVar[Diagnostics | None] = ContextVar("_READING_FOR", default=None)
"""The diagnostics of the stdio session whose server is being started, for its stdout reader."""


@contextmanager
def _reading_lines_for(diagnostics: Diagnostics) -> Iterator[None]:
    """The stdout reader of a server ``stdio_client`` starts in this context reports to ``diagnostics``."""
    token = _READING_FOR.set(diagnostics)
    try:
        yield
    finally:
        _READING_FOR.reset(token)


# ``stdio_client`` reads the server's stdout through this name of its module.
mcp.client.stdio.TextReceiveStream = _WholeLines  # type: ignore[misc]

_SSE_IDLE_SECONDS = 3600.0
"""How long an SSE stream may stay silent; long-running tools keep it idle between events."""
