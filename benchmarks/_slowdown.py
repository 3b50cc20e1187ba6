"""Sensitivity mode (``run.py --slowdown F``): the project's own work made F times as long, to show that a figure
would fail at such a regression.

Benchmark-side only: nothing in ``src/`` reads any of it. :func:`slowed` wraps, in this process, the project's call
path (ours: :data:`OURS_ASYNC`) and the SDK's call beneath it (theirs: ``mcp.Client.call_tool``). Each step the
project's code runs on a thread (a coroutine's run from one await to the next, awaited coroutines included) is timed,
less the steps of the SDK's call nested in it, and that much time is spent again ``F - 1`` times by a busy loop, as
slower code of ours would spend it. Only the outermost wrapped frame on a thread is timed, so nothing counts twice.
``SyncMcpClient.call_tool`` also spends its hand-over between threads again: its wall time less that of the async
call it hands over. Processes the benchmark starts read :data:`ENV` instead (``_slowed_cli.py``).
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable, Coroutine, Generator, Iterator
from typing import Any

import mcp
from _slowed_cli import spin

from knime_mcp.caller.table import _Run
from knime_mcp.mcp.client import McpClient
from knime_mcp.mcp.sync import SyncMcpClient

OURS_ASYNC: tuple[tuple[type, str], ...] = (
    (McpClient, "call_tool"),
    (_Run, "run"),
    (_Run, "_read"),
    (_Run, "_call"),
    (_Run, "_write"),
)
"""The project's coroutines on the timed paths: a call (figures 1, 2, 8) and the Tool Caller's reader, callers and
writer, each a task of its own (figures 4, 7)."""

_state = threading.local()


class _Clock:
    """Times the project's own steps on each thread and spends ``extra`` times as much again."""

    def __init__(self, extra: float, spend: Callable[[float], None] = spin) -> None:
        self.extra, self.spend = extra, spend

    @contextlib.contextmanager
    def ours(self) -> Iterator[None]:
        depth = getattr(_state, "depth", 0)
        _state.depth = depth + 1
        if depth:
            try:
                yield
            finally:
                _state.depth = depth
            return
        sdk_before, started = getattr(_state, "sdk", 0.0), time.perf_counter()
        try:
            yield
        finally:
            _state.depth = 0
            self.spend((time.perf_counter() - started - (getattr(_state, "sdk", 0.0) - sdk_before)) * self.extra)

    @contextlib.contextmanager
    def theirs(self) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            _state.sdk = getattr(_state, "sdk", 0.0) + time.perf_counter() - started


def _stepped(coroutine: Coroutine[Any, Any, Any], step: Callable[[], contextlib.AbstractContextManager[None]]) -> Any:
    """Await ``coroutine`` one step at a time, each step inside ``step()``."""

    class Stepped:
        def __await__(self) -> Generator[Any, Any, Any]:
            inner = coroutine.__await__()
            sent: Any = None
            thrown: BaseException | None = None
            while True:
                with step():
                    try:
                        yielded = inner.throw(thrown) if thrown is not None else inner.send(sent)
                    except StopIteration as stop:
                        return stop.value
                sent, thrown = None, None
                try:
                    sent = yield yielded
                except GeneratorExit:
                    inner.close()
                    raise
                except BaseException as error:  # noqa: BLE001 - handed on to the coroutine, as await does
                    thrown = error

    return Stepped()


def _wrapped(function: Callable[..., Any], step: Callable[[], contextlib.AbstractContextManager[None]]) -> Any:
    @functools.wraps(function)
    async def stepped(*args: Any, **kwargs: Any) -> Any:
        return await _stepped(function(*args, **kwargs), step)

    return stepped


class _HandOver:
    """``SyncMcpClient.call_tool`` spending its hand-over between threads again: its wall time less that of the async
    call it handed over (calls from one thread at a time, as figure 8 makes them)."""

    def __init__(self, extra: float) -> None:
        self.extra, self.inner = extra, 0.0

    def around_async(self, function: Callable[..., Any]) -> Any:
        @functools.wraps(function)
        async def walled(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await function(*args, **kwargs)
            finally:
                self.inner = time.perf_counter() - started

        return walled

    def around_sync(self, function: Callable[..., Any]) -> Any:
        @functools.wraps(function)
        def handed_over(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            result = function(*args, **kwargs)
            spin(max(time.perf_counter() - started - self.inner, 0.0) * self.extra)
            return result

        return handed_over


@contextlib.contextmanager
def slowed(factor: float) -> Iterator[None]:
    """The project's own work on the call paths ``factor`` times as long, inside the ``with``."""
    clock, hand_over = _Clock(factor - 1), _HandOver(factor - 1)
    originals = [(owner, name, owner.__dict__[name]) for owner, name in OURS_ASYNC]
    originals += [(owner, "call_tool", owner.__dict__["call_tool"]) for owner in (mcp.Client, SyncMcpClient)]
    for owner, name, function in originals[: len(OURS_ASYNC)]:
        setattr(owner, name, _wrapped(function, clock.ours))
    mcp.Client.call_tool = _wrapped(mcp.Client.call_tool, clock.theirs)  # type: ignore[method-assign]
    McpClient.call_tool = hand_over.around_async(McpClient.call_tool)  # type: ignore[method-assign]
    SyncMcpClient.call_tool = hand_over.around_sync(SyncMcpClient.call_tool)  # type: ignore[method-assign]
    try:
        yield
    finally:
        for owner, name, function in originals:
            setattr(owner, name, function)
