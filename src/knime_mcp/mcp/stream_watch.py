"""The session's (read, write) streams, watched for what the SDK does not report: requests written or not, responses
whose id matches no request, frames it could not read, a writer that is gone, and a transport that gave up on the
server (:attr:`Diagnostics.cut_off`)."""

from __future__ import annotations

from types import TracebackType
from typing import Generic, Self, TypeVar

import anyio
from mcp.client._transport import ReadStream, TransportStreams, WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import (
    CONNECTION_CLOSED,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from pydantic import ValidationError

from knime_mcp.mcp.diagnostics import Diagnostics, call_key_in, unreadable_id

__all__ = ["watch_streams"]


def watch_streams(
    streams: TransportStreams, diagnostics: Diagnostics, *, written_when_handed: bool = False
) -> TransportStreams:
    """The streams, noting a response whose id matches no request sent (the SDK drops such a response quietly, and
    the request it was meant for would look merely slow); with ``written_when_handed``, a request handed to the
    transport counts as sent (:attr:`Diagnostics.sent_calls`)."""
    read, write = streams
    pending: dict[str, RequestId] = {}
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
        self, stream: ReadStream[SessionMessage | Exception], pending: dict[str, RequestId], diagnostics: Diagnostics
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
            if (answer := self._cut_off()) is not None:
                return answer
            raise

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return self._note(await self._stream.__anext__())
        except (StopAsyncIteration, anyio.ClosedResourceError):
            self._diagnostics.ended = True
            if (answer := self._cut_off()) is not None:
                return answer
            raise

    def _cut_off(self) -> SessionMessage | None:
        """At the end of a transport that gave up on the server, the answer to one request still waiting: the reason,
        instead of the SDK's bare "connection closed" (with the same code, so the session is known to have ended)."""
        if self._diagnostics.cut_off is None or not self._pending:
            return None
        _, request_id = self._pending.popitem()
        error = ErrorData(code=CONNECTION_CLOSED, message=self._diagnostics.cut_off)
        return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))

    def _note(self, item: SessionMessage | Exception) -> SessionMessage | Exception:
        if isinstance(item, Exception):
            return self._unreadable(item)
        if isinstance(item.message, JSONRPCResponse | JSONRPCError):
            key = str(item.message.id)
            if key in self._pending:
                del self._pending[key]
            elif item.message.id is not None and self._diagnostics.unmatched_id is None:
                self._diagnostics.unmatched_id = key[:40]
        return item

    def _unreadable(self, error: Exception) -> SessionMessage | Exception:
        """A frame the SDK could not parse (invalid JSON, nested too deeply, not JSON-RPC) is noted for the
        handshake's error; when it answers a request in flight, it fails that request now instead of at its timeout.
        A frame without a request's id (a log line on stdout) passes on, as the SDK passes it, to be ignored."""
        self._diagnostics.note_malformed(error)
        request_id = unreadable_id(error)
        if request_id is None or str(request_id) not in self._pending:
            return error
        del self._pending[str(request_id)]
        error_data = ErrorData(code=PARSE_ERROR, message=_first_error(error))
        return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error_data))


def _first_error(error: Exception) -> str:
    return str(error.errors()[0]["msg"]) if isinstance(error, ValidationError) and error.errors() else str(error)


class _WatchedWrites(_Delegating[WriteStream[SessionMessage]]):
    def __init__(
        self,
        stream: WriteStream[SessionMessage],
        pending: dict[str, RequestId],
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
            self._pending[str(item.message.id)] = item.message.id
            key = call_key_in({"params": item.message.params}) if self._written_when_handed else None
        if key is not None:
            self._diagnostics.sent_calls.add(key)
        try:
            await self._stream.send(item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            # The transport's writer is gone: this request was never handed over, and no later one will be.
            self._diagnostics.sent_calls.discard(key or "")
            self._diagnostics.ended = True
            raise
