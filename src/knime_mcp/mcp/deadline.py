"""A call timeout that progress restarts: *Longest call while progress is reported*.

The SDK's ``read_timeout_seconds`` is fixed when a request is sent, so a tool that keeps saying "still working" is
cut off like one that hangs. :class:`CallDeadline` is an anyio cancel scope around the whole call whose deadline moves
on each progress notification or new task status, up to :attr:`Timeouts.progress_max`. Cancelling the scope abandons the
SDK's request, which then cancels it on the server as a plain timeout does: ``notifications/cancelled``, or on
Streamable HTTP at 2026-07-28 closing the request's response stream, which is the cancellation there.
"""

from __future__ import annotations

import anyio

from knime_mcp.config import Timeouts

__all__ = ["CallDeadline"]


class CallDeadline:
    """The deadline of one call: ``timeouts.call`` from the start or from the last progress, at most
    ``timeouts.progress_max`` from the start."""

    def __init__(self, timeouts: Timeouts, call: float | None = None) -> None:
        """``call``: a per-run call timeout that overrides the server's."""
        self.seconds = call or timeouts.call
        self.longest = max(self.seconds, timeouts.progress_max or 0.0)
        self._scope: anyio.CancelScope | None = None
        self._start = 0.0

    @property
    def scope(self) -> anyio.CancelScope:
        """The cancel scope to enter right away, around the whole call; made on first use, as a plain call with a
        fixed timeout leaves the timeout to the SDK and needs none (making one is a cost per call)."""
        if self._scope is None:
            self._start = anyio.current_time()
            self._scope = anyio.CancelScope(deadline=self._start + self.seconds)
        return self._scope

    @property
    def extends(self) -> bool:
        """Whether progress can move the deadline at all."""
        return self.longest > self.seconds

    def extend(self) -> None:
        """Progress was reported: restart the call timeout, within the longest call."""
        if self.extends and self._scope is not None:
            now = anyio.current_time()
            self._scope.deadline = min(now + self.seconds, self._start + self.longest)

    @property
    def expired(self) -> bool:
        """Whether the scope cut the call off (its deadline passed)."""
        return self._scope is not None and self._scope.cancelled_caught

    def describe(self) -> str:
        """The limit in words, for the timeout error."""
        if self.extends:
            return f"within {self.seconds:g} s of its last progress report (at most {self.longest:g} s in all)"
        return f"within {self.seconds:g} s"
