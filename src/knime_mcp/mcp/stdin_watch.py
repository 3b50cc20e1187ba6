"""Below :mod:`knime_mcp.mcp.transports`: a stdio server's stdin, watched for the messages that did not get through.

The SDK's ``stdio_client`` ends a session quietly when a write to the server fails, and the session above sees only
"connection closed". Yet a request whose write failed provably never reached the server, so it never ran and any
tool may be sent again on a new session; only the write itself can tell. While :func:`watching_stdin` is active,
the servers that ``stdio_client`` starts get their stdin wrapped, and each message they could not take is reported.

    with watching_stdin(diagnostics.undelivered):
        async with stdio_client(params) as streams:
            ...
"""

from __future__ import annotations

import asyncio
import select
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from signal import Signals
from typing import Any

import anyio
import mcp.client.stdio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

__all__ = ["watching_stdin"]

Undelivered = Callable[[bytes], None]

_REPORT_TO: ContextVar[Undelivered | None] = ContextVar("_REPORT_TO", default=None)
"""Where the stdio session whose server is being started reports undelivered messages."""


@contextmanager
def watching_stdin(report: Undelivered) -> Iterator[None]:
    """Servers started by ``stdio_client`` in this context report each message their stdin did not take."""
    token = _REPORT_TO.set(report)
    try:
        yield
    finally:
        _REPORT_TO.reset(token)


async def _spawn_watching_stdin(*args: Any, **kwargs: Any) -> object:
    """The SDK's spawn, with the stdin of the new process watched; ``stdio_client`` spawns through this name of its
    module, so that is where the watch is set."""
    process = await _sdk_spawn(*args, **kwargs)
    report = _REPORT_TO.get()
    if report is None or not isinstance(process, Process):
        return process
    return _WatchedProcess(process, report)


_sdk_spawn = mcp.client.stdio._create_platform_compatible_process
mcp.client.stdio._create_platform_compatible_process = _spawn_watching_stdin


class _WatchedProcess(Process):
    """A server process whose stdin reports what it did not take; the rest is the process's own."""

    def __init__(self, process: Process, report: Undelivered) -> None:
        self._wrapped = process
        self._stdin = _WatchedStdin(process.stdin, report) if process.stdin is not None else None

    def __getattr__(self, name: str) -> Any:
        # The SDK reads private attributes of the process it spawned (its asyncio transport) to close it.
        return getattr(self._wrapped, name)

    async def aclose(self) -> None:
        await self._wrapped.aclose()

    async def wait(self) -> int:
        return await self._wrapped.wait()

    def terminate(self) -> None:
        self._wrapped.terminate()

    def kill(self) -> None:
        self._wrapped.kill()

    def send_signal(self, signal: Signals) -> None:
        self._wrapped.send_signal(signal)

    @property
    def pid(self) -> int:
        return self._wrapped.pid

    @property
    def returncode(self) -> int | None:
        return self._wrapped.returncode

    @property
    def stdin(self) -> ByteSendStream | None:
        return self._stdin

    @property
    def stdout(self) -> ByteReceiveStream | None:
        return self._wrapped.stdout

    @property
    def stderr(self) -> ByteReceiveStream | None:
        return self._wrapped.stderr


class _WatchedStdin(ByteSendStream):
    def __init__(self, stream: ByteSendStream, report: Undelivered) -> None:
        self._stream = stream
        self._report = report
        self._poller = _pipe_poller(stream)

    async def send(self, item: bytes) -> None:
        # The SDK writes one message per call, so a failed write is exactly one message that did not get through
        # (a partly written line is one the server cannot have read whole).
        if _reader_gone(self._stream, self._poller):
            self._report(item)
            raise anyio.BrokenResourceError("The server's stdin has no reader: the server has exited.")
        try:
            await self._stream.send(item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self._report(item)
            raise

    async def aclose(self) -> None:
        await self._stream.aclose()


def _pipe_poller(stream: ByteSendStream) -> select.poll | None:
    """A poller of the pipe under ``stream`` (anyio keeps the asyncio writer in ``_stream``), made once per server
    rather than once per message; None where there is none (not POSIX, not a pipe)."""
    writer = getattr(stream, "_stream", None)
    if not isinstance(writer, asyncio.StreamWriter) or not hasattr(select, "poll"):
        return None
    pipe = writer.transport.get_extra_info("pipe")
    if pipe is None:
        return None
    poller = select.poll()
    try:
        poller.register(pipe.fileno(), select.POLLOUT)
    except ValueError:
        return None
    return poller


def _reader_gone(stream: ByteSendStream, poller: select.poll | None) -> bool:
    """Whether the pipe has no reader any more (the server exited), so nothing written to it can get through.

    asyncio reports a write to such a pipe (EPIPE) only by closing the pipe's transport a few loop turns later, and
    the send looks fine meanwhile; so the pipe is asked before the write, on POSIX (elsewhere the write itself
    fails). A closed writer is asked first: its pipe's descriptor may since belong to another file.
    """
    writer = getattr(stream, "_stream", None)
    if isinstance(writer, asyncio.StreamWriter) and writer.is_closing():
        return True
    if poller is None:
        return False
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
