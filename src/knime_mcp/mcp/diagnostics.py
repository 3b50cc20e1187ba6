"""What a session's transport saw, for the client's decisions and error messages.

The SDK turns HTTP statuses into generic JSON-RPC errors, drops responses it cannot match, and hands unreadable frames
over as bare exceptions; a :class:`Diagnostics` per session keeps what they were: refused and sent requests by call
key, the last HTTP error and authentication challenge, a stdio server's stderr, the first malformed frame.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import IO, Any, NamedTuple

import anyio
import httpx2
from mcp_types import RequestId
from pydantic import ValidationError

from knime_mcp.mcp.legacy_sse import reply_id
from knime_mcp.net.retry_after import retry_after

__all__ = ["AUTH_STATUSES", "CALL_KEY", "Diagnostics", "Refusal", "call_key_in", "unreadable_id"]

AUTH_STATUSES = frozenset({401, 403})
"""Answers that ask for (other) credentials: they stop the ``auto`` fallback and no later status hides them."""


class Refusal(NamedTuple):
    """How the server refused a request: its HTTP status, Retry-After seconds and ``WWW-Authenticate`` header."""

    status: int
    retry_after: float | None
    challenge: str | None


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
        self.refused_calls: dict[str, Refusal] = {}
        """Refused requests, by the call key stamped in their ``_meta``."""
        self.failed_sign_ins: dict[str, Exception] = {}
        """Why the sign-in (or step-up) that a refused request needed failed, by its call key."""
        self.unmatched_id: str | None = None
        """The first response id that matches no request sent on the session, shortened."""
        self.sent_calls: set[str] = set()
        """Call keys of the requests that may have reached the server: over stdio from when the request is handed
        to the writer, unless the write fails; over HTTP from when its headers start to go out. A request whose
        session ends before then never ran. The client forgets each key once its request is settled."""
        self.ended = False
        """Whether the transport ended under the session: its read stream closed, or it took no more writes."""
        self.cut_off: str | None = None
        """Why the transport stopped reading the server and ended the session (a stdio line past the message limit):
        the error of every request still waiting for an answer."""
        self.end_on_refusal: Callable[[], Awaitable[None]] | None = None
        """Set where the transport does not answer a refused or failed request itself (legacy SSE): ends the
        session."""
        self._bodies: dict[str, _ResponseBody] = {}

    async def record_response(self, response: httpx2.Response) -> None:
        """Every HTTP error answer, also one that an OAuth provider goes on to answer itself (a sign-in, a refresh,
        a step-up): what the server asked for."""
        if response.status_code >= 400 and not self.asked_for_auth:
            self.http_status = response.status_code
            challenge = response.headers.get("WWW-Authenticate")
            if challenge is not None or response.status_code in AUTH_STATUSES:
                self.challenge = challenge
                self._auth_answer = True

    async def record_outcome(self, response: httpx2.Response) -> None:
        """The response a request finally got, after any sign-in, refresh or step-up: a refusal of a JSON-RPC
        request is kept by its call key, and ends a legacy SSE session."""
        if response.status_code < 400:
            return
        body = _body(response.request)
        if (key := call_key_in(body)) is not None:
            challenge = response.headers.get("WWW-Authenticate")
            self.refused_calls[key] = Refusal(response.status_code, retry_after(response.headers), challenge)
        await self._end_on_refusal(body)

    async def record_failure(self, request: httpx2.Request, error: Exception) -> None:
        """A request that got no response: its connection failed, or the sign-in it needed did (then it was refused,
        and not sent again). For a JSON-RPC message that is the end of the transport: the SDK's writers (Streamable
        HTTP and SSE) stop at the first failed POST."""
        body = _body(request)
        if isinstance(body, dict) and "method" in body:
            self.ended = True
        if not isinstance(error, httpx2.TransportError) and (key := call_key_in(body)) is not None:
            self.failed_sign_ins[key] = error
        await self._end_on_refusal(body)

    async def _end_on_refusal(self, body: object) -> None:
        if self.end_on_refusal is not None and isinstance(body, dict) and "method" in body and "id" in body:
            await self.end_on_refusal()

    def never_sent(self, key: str | None) -> bool:
        """Whether the request with this call key, unanswered when its session ended, provably never reached the
        server (see :attr:`sent_calls`); ask only once the session's transport has closed."""
        return key is not None and key not in self.sent_calls

    def undelivered(self, message: bytes) -> None:
        """A message written to a stdio server did not get through."""
        try:
            key = call_key_in(json.loads(message))
        except ValueError:
            return
        self.sent_calls.discard(key or "")

    def forget(self, key: str | None) -> None:
        """Drop a settled request's key, so a long session does not collect them. A response still being read for
        it (the call was given up: it timed out or was cancelled) is abandoned, so that its stream is closed instead
        of read to its end (which the SDK does for servers it speaks the 2025 protocol with)."""
        self.sent_calls.discard(key or "")
        if (body := self._bodies.pop(key or "", None)) is not None:
            body.abandon()

    def watch_body(self, request: httpx2.Request, response: httpx2.Response, *, limit: int) -> None:
        """Bound a one-message (JSON) response body by ``limit`` bytes, as server-sent events are, and
        keep a request's response body by its call key, so that :meth:`forget` can abandon it. Any other body (a
        session's event stream, an empty answer) is left as it is: watching each of its chunks costs a cancel scope
        apiece, and over SSE every reply of the session arrives on one such stream."""
        one_message = response.headers.get("Content-Type", "").lower().startswith("application/json")
        key = request.extensions.get(_KEY_EXTENSION)
        if key is None and not one_message:
            return
        body = _ResponseBody(response.stream, limit=limit if one_message else None)
        response.stream = body
        if key is not None:
            self._bodies[key] = body

    async def record_request(self, request: httpx2.Request) -> None:
        """Watch the request go out, so that one cut off before it was written counts as never sent."""
        key = call_key_in(_body(request))
        if key is None:
            return
        outer = request.extensions.get("trace")

        async def trace(event: str, info: dict[str, Any]) -> None:
            if event.endswith("send_request_headers.started"):
                self.sent_calls.add(key)
                # Seen: the request's other events (about ten) need not pass through here.
                request.extensions["trace"] = outer
            if outer is not None:
                await outer(event, info)

        request.extensions = {**request.extensions, "trace": trace, _KEY_EXTENSION: key}

    @property
    def asked_for_auth(self) -> bool:
        """Whether the server answered that it wants authentication: ``auto`` must not try another transport."""
        return self._auth_answer

    def note_malformed(self, error: Exception) -> None:
        """A frame the SDK could not parse, which it hands over as an exception."""
        if self.malformed is None:
            received = next(iter(_received(error)), None)
            self.malformed = f"received {str(received)[:80]!r}" if received is not None else type(error).__name__

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


class _ResponseBody(httpx2.AsyncByteStream):
    """A response body that ends with an error once it exceeds ``limit`` bytes, or once :meth:`abandon` is called
    (at once, even while a read waits). The SDK fails a request whose JSON body errs, and ends a request's event
    stream at any error, closing the response either way; the session goes on."""

    def __init__(self, stream: httpx2.AsyncByteStream, *, limit: int | None) -> None:
        self._stream = stream
        self._limit = limit
        self._abandoned = False
        self._reading: anyio.CancelScope | None = None

    def abandon(self) -> None:
        self._abandoned = True
        if self._reading is not None:
            self._reading.cancel()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        chunks = aiter(self._stream)
        while True:
            chunk = None
            with anyio.CancelScope() as self._reading:
                if not self._abandoned:
                    chunk = await anext(chunks, None)
            self._reading = None
            if self._abandoned:
                raise httpx2.StreamError("The call was given up; its response is no longer read.")
            if chunk is None:
                return
            size += len(chunk)
            if self._limit is not None and size > self._limit:
                raise httpx2.StreamError(f"The response exceeded the {self._limit} byte limit.")
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


_KEY_EXTENSION = "knime_mcp.call_key"
"""Where :meth:`Diagnostics.record_request` leaves a request's call key for the transport to find."""

CALL_KEY = "io.github.knime-mcp/call"
"""A ``_meta`` entry on each request, so what the transport saw of it (a refused HTTP request, a failed write) can be
matched to the call that sent it."""


def _body(request: httpx2.Request) -> object:
    """The request's JSON body, or None."""
    try:
        return json.loads(request.content)
    except (ValueError, httpx2.RequestNotRead):
        return None


def call_key_in(body: object) -> str | None:
    params = body.get("params") if isinstance(body, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    key = meta.get(CALL_KEY) if isinstance(meta, dict) else None
    return key if isinstance(key, str) else None


def _received(error: Exception) -> list[object]:
    """What the server sent, as the parse error of an unreadable frame quotes it."""
    if not isinstance(error, ValidationError):
        return []
    return [found["input"] for found in error.errors() if "input" in found]


def unreadable_id(error: Exception) -> RequestId | None:
    """The id of the request an unreadable frame answers, if it can be told."""
    for received in _received(error):
        if isinstance(received, dict):
            found = received.get("id")
        else:
            found = reply_id(received) if isinstance(received, str) else None
        if isinstance(found, int | str) and not isinstance(found, bool):
            return found
    return None


