"""What the SDK's legacy SSE client lacks beside its Streamable HTTP one: failures that end a call at once.

The legacy transport carries every reply of a session on one event stream and sends each request in a POST of its
own. ``httpx2`` ends the stream at the first event over its size limit, with the session and every call in flight:
here such an event answers its request with a JSON-RPC error instead, as the SDK's Streamable HTTP client does, and
the session goes on. A POST the server refuses (HTTP 413, 404, 503) or whose connection breaks is only logged, and
the SDK sends nothing more: here it ends the session at once, instead of leaving its calls to wait for their timeout.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress

import anyio
import httpx2
from mcp.client._transport import TransportStreams
from mcp_types import CONNECTION_CLOSED, RequestId

__all__ = ["EventLimit", "bounded_events", "ending_on_refusal", "reply_id"]

_EDGE = 256
"""How much of an event's start and end is kept to find the id of the request it answers."""

_ID = r'(?P<id>-?\d+|"(?:[^"\\]|\\.)*")'
_REPLY_START = r'\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*' + _ID
_LEADING_ID = re.compile(r"data:\s*" + _REPLY_START)
_LINE_START_ID = re.compile(r"\s*" + _REPLY_START)
_TRAILING_ID = re.compile(r'[,{]\s*"id"\s*:\s*' + _ID + r"\s*\}\s*$")
"""The top-level id of a JSON-RPC reply stands first (Python servers) or last (TypeScript servers); an id inside the
result is never right after the opening brace nor right before the closing one."""


def reply_id(text: str) -> RequestId | None:
    """The id of the JSON-RPC reply ``text`` holds, found without parsing it: it may be cut off, or nested too deeply
    to parse."""
    found = _LINE_START_ID.match(text) or _TRAILING_ID.search(text[-_EDGE:].rstrip())
    return json.loads(found["id"]) if found else None


class EventLimit:
    """Holds back each event until it is complete (at most ``limit()`` UTF-8 bytes) and passes it on whole; an event
    over the limit becomes a JSON-RPC error for its request. Line ends are normalised to ``\\n``, which SSE treats
    alike."""

    def __init__(self, limit: Callable[[], int]) -> None:
        self._limit = limit
        self._held: list[str] = []
        self._size = 0
        self._head = ""
        self._tail = ""
        self._over = False
        self._after_newline = True
        self._carried_cr = False

    def feed(self, text: str) -> str:
        """The complete events that ``text`` ends, as text for an SSE parser."""
        if self._carried_cr:
            text = "\r" + text
        self._carried_cr = text.endswith("\r")
        if self._carried_cr:
            text = text[:-1]
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        released: list[str] = []
        start = 0
        while start < len(text):
            end = self._event_end(text, start)
            self._hold(text[start : len(text) if end < 0 else end])
            if end < 0:
                break
            released.append(self._release())
            start = end
        if text:
            self._after_newline = text.endswith("\n")
        return "".join(released)

    def end(self) -> str:
        """What the end of the stream completes: a CR held back in case an LF followed it."""
        if not self._carried_cr:
            return ""
        self._carried_cr = False
        return self.feed("\n")

    def _event_end(self, text: str, start: int) -> int:
        """The index after the blank line that ends the event under way, or -1."""
        after_newline = text[start - 1] == "\n" if start else self._after_newline
        if after_newline and text.startswith("\n", start):
            return start + 1
        found = text.find("\n\n", start)
        return found + 2 if found >= 0 else -1

    def _hold(self, piece: str) -> None:
        if len(self._head) < _EDGE:
            self._head = (self._head + piece)[:_EDGE]
        self._tail = (self._tail + piece[-_EDGE:])[-_EDGE:]
        self._size += len(piece.encode("utf-8"))
        if self._over:
            return
        if self._size > self._limit():
            self._over = True
            self._held = []
        else:
            self._held.append(piece)

    def _release(self) -> str:
        event = self._error_event() if self._over else "".join(self._held)
        self._held, self._size, self._head, self._tail, self._over = [], 0, "", "", False
        return event

    def _error_event(self) -> str:
        found = _LEADING_ID.search(self._head) or _TRAILING_ID.search(self._tail.rstrip("\n"))
        if found is None:
            # No request to fail: the SDK would wait for an answer that never comes, so end the stream as before.
            raise httpx2.SSEError(f"Server-sent event exceeded the {self._limit()} byte limit.")
        error = {"code": CONNECTION_CLOSED, "message": f"Server-sent event exceeded the {self._limit()} byte limit."}
        reply = {"jsonrpc": "2.0", "id": json.loads(found["id"]), "error": error}
        return f"event: message\ndata: {json.dumps(reply)}\n\n"


class _LimitedResponse:
    """The response as an :class:`httpx2.EventSource` reads it, its text passed through an :class:`EventLimit`; an
    event left unterminated when the stream ends is dropped, as an SSE parser would drop it."""

    def __init__(self, response: httpx2.Response, limit: EventLimit) -> None:
        self._response = response
        self._limit = limit

    def __getattr__(self, name: str) -> object:
        return getattr(self._response, name)

    async def aiter_text(self) -> AsyncIterator[str]:
        async for text in self._response.aiter_text():
            if events := self._limit.feed(text):
                yield events
        if events := self._limit.end():
            yield events


def bounded_events(
    open_events: Callable[..., AbstractAsyncContextManager[httpx2.EventSource]], limit: Callable[[], int]
) -> Callable[..., AbstractAsyncContextManager[httpx2.EventSource]]:
    """``open_events`` (the SDK's ``sse_within_origin``) with events over ``limit()`` bytes failing their request."""

    @asynccontextmanager
    async def opened(
        client: httpx2.AsyncClient, url: httpx2.URL | str, **kwargs: object
    ) -> AsyncIterator[httpx2.EventSource]:
        async with open_events(client, url, **{**kwargs, "max_event_size": None}) as events:
            limited = _LimitedResponse(events.response, EventLimit(limit))
            yield httpx2.EventSource(limited, max_event_size=None)  # type: ignore[arg-type]

    return opened


def ending_on_refusal(streams: TransportStreams) -> Callable[[], Awaitable[None]]:
    """What ends the session when a POST of it fails: the SDK's writer stops at the first failed POST and only logs
    it, so every later request, and the one refused, would wait for its timeout. Closing the read stream ends the
    session at once; the client then tells each request's fate from what the transport saw (refused with a status,
    never sent, or sent)."""
    read, _ = streams

    async def end() -> None:
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await read.aclose()

    return end
