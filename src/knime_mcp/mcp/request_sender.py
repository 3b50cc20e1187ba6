"""Sending one request to an MCP server, and saying clearly what became of it.

Layer: wire, between :class:`~knime_mcp.mcp.client.McpClient` (which says what to send) and
:class:`~knime_mcp.mcp.session_keeper.SessionKeeper` (which holds the session to send it over). The SDK reports an HTTP
refusal, a timeout and a request cut off by a lost session all as generic JSON-RPC errors; the session's
:class:`~knime_mcp.mcp.diagnostics.Diagnostics`, matched by call key, tell them apart, and each becomes its
:mod:`knime_mcp.errors` error. After a lost session the request is sent once more over a new one only when that is
safe: it only reads, or it never reached the server. A server that keeps failing opens the circuit breaker.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, METHOD_NOT_FOUND, PARSE_ERROR, REQUEST_TIMEOUT

from knime_mcp.errors import (
    SESSION_TERMINATED,
    McpToolError,
    OutcomeUnknownError,
    ServerBusyError,
    ServerConnectError,
    SessionExpiredError,
    SessionLostError,
    ToolTimeoutError,
    translate,
    translate_errors,
)
from knime_mcp.mcp.diagnostics import CALL_KEY, Diagnostics
from knime_mcp.mcp.session_keeper import LiveSession, SessionKeeper
from knime_mcp.net.breaker import Circuit

__all__ = ["RequestSender"]

T = TypeVar("T")


class RequestSender:
    """Sends requests over the sessions of one :class:`SessionKeeper`, through one circuit breaker."""

    def __init__(self, keeper: SessionKeeper, circuit: Circuit) -> None:
        self._keeper = keeper
        self._circuit = circuit

    @property
    def server(self) -> str:
        return self._keeper.server

    async def request(self, send: Callable[[LiveSession], Awaitable[T]], *, what: str, repeatable: bool) -> T:
        """Send one request, unless the server keeps failing (the circuit is open); connection failures count
        towards opening it, any answer closes it again."""
        self._circuit.check()
        try:
            session = self._keeper.current()
            if session.lost is not None or session.closed.is_set():
                session = await self._keeper.replace(session)
            try:
                # translate_errors, written out: a generator's context manager is a cost every request pays
                try:
                    result = await send(session)
                except McpToolError:
                    raise
                except Exception as exc:
                    raise translate(exc, self.server) from exc
            except SessionLostError as lost:
                result = await self._resend(send, session, lost, what=what, repeatable=repeatable)
        except ServerConnectError as exc:
            self._circuit.failed(exc)
            raise
        self._circuit.succeeded()
        return result

    async def read(self, send: Callable[[LiveSession], Awaitable[T]], *, what: str) -> T:
        """A request that only reads, so it is sent again after a lost session; secrets are masked in its errors."""
        try:
            return await self.request(send, what=what, repeatable=True)
        except McpToolError as exc:
            self._keeper.masked(exc)
            raise

    async def _resend(
        self,
        send: Callable[[LiveSession], Awaitable[T]],
        session: LiveSession,
        lost: SessionLostError,
        *,
        what: str,
        repeatable: bool,
    ) -> T:
        """After ``session`` was lost under a request, reconnect once, and resend only if ``repeatable`` or the
        request never ran (otherwise it may or may not have been carried out)."""
        sent = not isinstance(lost, SessionExpiredError)
        try:
            fresh = await self._keeper.replace(session)
        except ServerConnectError as failed:
            if not sent:
                raise
            # The request went out before the server went away: "could not connect" alone would say it never ran.
            reason = failed.message.rstrip(".")
            if repeatable:
                message = f"The session was lost during {what}, and reconnecting failed ({reason})."
                raise SessionLostError(message, server=self.server, hint=failed.hint) from failed
            self._circuit.failed(failed)
            hint = f"Reconnecting failed too ({reason}); check the tool's effect once the server is back."
            raise _outcome_unknown(what, self.server, hint) from failed
        if sent and not repeatable:
            raise _outcome_unknown(
                what, self.server, "A new session is open; check the tool's effect before calling it again."
            ) from lost
        with translate_errors(self.server):
            return await send(fresh)

    async def ask(
        self,
        session: LiveSession,
        send: Callable[..., Awaitable[T]],
        *,
        timed_out: Callable[[Diagnostics], McpToolError],
        refused: Callable[[MCPError], McpToolError] | None = None,
    ) -> T:
        """``send(meta=…)`` once over ``session``: an HTTP refusal, a request that never went out and the call
        timeout (the error ``timed_out`` makes) become clear errors, and so does the server's own JSON-RPC error,
        when ``refused`` translates it."""
        key = _call_key()
        try:
            return await send(meta=_meta(key))
        except MCPError as exc:
            if (refusal := await self._refusal(session, key, exc)) is not None:
                raise refusal from exc
            if exc.error.code == REQUEST_TIMEOUT:
                self._keeper.calls_cancelled = True
                raise timed_out(session.diagnostics) from exc
            if refused is None or exc.error.code in (CONNECTION_CLOSED, PARSE_ERROR):
                raise
            raise refused(exc) from exc
        finally:
            session.diagnostics.forget(key)

    def late(self, what: str, error: type[McpToolError] = ToolTimeoutError) -> Callable[[Diagnostics], McpToolError]:
        """The error for a request the server did not answer within the call timeout: ``what`` it did not do."""
        return lambda diagnostics: error(
            f"The server did not {what} within the call timeout of {self._keeper.spec.timeouts.call:g} s.",
            server=self.server,
            hint=diagnostics.no_answer_hint(
                "Raise the call timeout if the server is slow, or check that it is responsive."
            ),
        )

    async def _refusal(self, session: LiveSession, key: str | None, exc: MCPError) -> McpToolError | None:
        """The error for a request the server refused with an HTTP status (matched by its call key), or whose sign-in
        failed, or that never reached the server before its session ended, else None.

        On an open Streamable HTTP or SSE session, 404 (and 400, which some servers send) means the server no longer
        knows the session id: the request never ran.
        """
        if _transport_ended(session, exc):
            await self._keeper.wind_down(session)
        if key and (failed := session.diagnostics.failed_sign_ins.pop(key, None)) is not None:
            return translate(failed, self.server)
        refused = session.diagnostics.refused_calls.pop(key, None) if key else None
        if refused is None:
            return self._unsent(session, key, exc)
        status, retry_after, challenge = refused
        if _busy(status):
            return ServerBusyError(status, retry_after, server=self.server)
        if status in _SESSION_REFUSED and session.kind == "streamable-http" and _servers_own_error(status, exc):
            return None
        if status in _SESSION_REFUSED and session.kind != "stdio":
            return SessionExpiredError(
                f"The server refused this session (HTTP {status}); it may have restarted.",
                server=self.server,
                hint="The client opens a new session once; if that fails too, check the server's log.",
            )
        return translate(exc, self.server, http_status=status, challenge=challenge)

    def _unsent(self, session: LiveSession, key: str | None, exc: MCPError) -> McpToolError | None:
        """The error for a request cut off by the end of its session before it reached the server (a stdio server
        that had exited, an SSE stream that had ended), else None: it never ran, so any tool may be sent again."""
        if not _transport_ended(session, exc) or not session.diagnostics.never_sent(key):
            return None
        return SessionExpiredError(
            "The session had ended before the request was sent.",
            server=self.server,
            hint="The client opens a new session once; if that fails too, check the server's log.",
        )


def _transport_ended(session: LiveSession, exc: MCPError) -> bool:
    """Whether ``exc`` is the end of the session's transport, not one request given up on a live session (Streamable
    HTTP answers "connection closed" for a response stream that broke off)."""
    return exc.error.code == CONNECTION_CLOSED and session.diagnostics.ended


def _outcome_unknown(what: str, server: str, hint: str) -> OutcomeUnknownError:
    """A request that reached the server before its session was lost: it may have run, so it is never called a
    connection failure."""
    message = f"The session was lost during {what}; it may or may not have run."
    return OutcomeUnknownError(message, server=server, hint=hint)


def _busy(status: int) -> bool:
    return status == 429 or status >= 500


_SESSION_REFUSED = frozenset({400, 404})

_STAND_INS = frozenset({"Server returned an error response", SESSION_TERMINATED, "Not Found"})
"""The messages of the errors the SDK makes up for an HTTP error status whose body holds no JSON-RPC error."""


def _servers_own_error(status: int, exc: MCPError) -> bool:
    """Whether a 400 or 404 carries the server's own JSON-RPC error (400 for invalid params, 404 for an unknown
    method), not the refusal of a session id it forgot: a 404 says that whatever its body (the SDK's servers send
    "Session not found" as -32600, the TypeScript SDK's as -32001, which reads as a timeout)."""
    return exc.error.message not in _STAND_INS and (status == 400 or exc.error.code == METHOD_NOT_FOUND)


_KEY_PREFIX = secrets.token_hex(4)
_KEY_NUMBERS = itertools.count()


def _call_key() -> str:
    """A fresh key to match what the transport saw of a request (an HTTP refusal, a failed write) to the request:
    unique in this process by its number, without drawing random bytes per call (which a call of a fraction of a
    millisecond notices); the random prefix keeps keys of different processes apart in a server's logs."""
    return f"{_KEY_PREFIX}-{next(_KEY_NUMBERS):x}"


def _meta(key: str | None) -> dict[str, Any] | None:
    return {CALL_KEY: key} if key else None
