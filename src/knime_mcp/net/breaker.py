"""Circuit breaking: stop trying a server that keeps failing, for a cool-down, and fail fast with its last error.

Used by :class:`~knime_mcp.calls.pool.ClientPool` for opening sessions, by :class:`~knime_mcp.mcp.client.McpClient`
for requests on an open one (refused connections, lost sessions, failed reconnects), so that a Tool Caller over a
thousand rows does not spend a thousand attempts on a dead server. Settings and authentication errors never heal
by waiting, so they fail fast for good. A reply that breaks the MCP schema (:class:`ServerProtocolError`) is an
answer from a live server, so it counts as one, not as a failure. A 5xx counts as a failure (a server that answers
every call with 500 would otherwise take each row's retries for hours); a 429 does not (the server is pacing the
client, and the dispatcher waits as it asks). Either opens the circuit at once when the server asked to be left alone
longer than knime-mcp waits, until the time it named.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from knime_mcp.errors import (
    CircuitOpenError,
    ConfigError,
    McpToolError,
    ServerAuthError,
    ServerBusyError,
    ServerProtocolError,
)

__all__ = ["DEFAULT_BREAKER", "Circuit", "CircuitBreaker"]


@dataclass(frozen=True, kw_only=True)
class CircuitBreaker:
    """When to leave a failing server alone."""

    threshold: int = 3
    """Failures in a row after which the server is left alone."""

    cooldown: float = 30.0
    """Seconds to fail fast before trying the server again."""


DEFAULT_BREAKER = CircuitBreaker()


class Circuit:
    """One server's breaker state."""

    def __init__(self, breaker: CircuitBreaker = DEFAULT_BREAKER) -> None:
        self._breaker = breaker
        self._failures = 0
        self._open_until: float | None = None
        self._last: McpToolError | None = None

    def check(self) -> None:
        """Raise instead of trying: the last error if it cannot heal, or a fail-fast error while open."""
        last = self._last
        if isinstance(last, ConfigError | ServerAuthError):
            raise last
        if last is None or self._open_until is None:
            return
        remaining = self._open_until - anyio.current_time()
        if remaining <= 0:
            self._open_until = None
            return
        asked = isinstance(last, ServerBusyError) and last.too_long_to_wait
        why = "as it asked" if asked else f"after {self._failures} failures in a row"
        raise CircuitOpenError(
            f"Not trying the server again for {remaining:.0f} s {why} (last: {last.message})",
            server=last.server,
            hint=last.hint,
        )

    def failed(self, error: McpToolError) -> None:
        if isinstance(error, ServerProtocolError):
            self.succeeded()
            return
        if isinstance(error, ServerBusyError) and error.too_long_to_wait and error.retry_after is not None:
            self._last = error
            self._open_until = anyio.current_time() + error.retry_after
            return
        if isinstance(error, ServerBusyError) and error.status < 500:
            return
        self._failures += 1
        self._last = error
        if self._failures >= self._breaker.threshold:
            self._open_until = anyio.current_time() + self._breaker.cooldown

    def succeeded(self) -> None:
        self._failures = 0
        self._open_until = None
        self._last = None
