"""Sensitivity mode (``run.py --slowdown F``): the project's own work made F times as long, to show that a figure
would fail at such a regression.

Benchmark-side only: nothing in ``src/`` reads any of it. :func:`slowed` wraps, in this process, the project's call
path (ours: :data:`OURS_ASYNC`) and the work beneath it that the peers do as well (theirs: :data:`THEIRS`). Each step
the project's code runs on a thread (a coroutine's run from one await to the next, awaited coroutines included) is
timed, less the steps of theirs nested in it, and that much time is spent again ``F - 1`` times by a busy loop, as
slower code of ours would spend it. Only the outermost wrapped frame on a thread is timed, so nothing counts twice.
``SyncMcpClient.call_tool`` also spends its hand-over between threads again: its wall time less that of the async
call it hands over. Processes the benchmark starts read :data:`ENV` instead (``_slowed_cli.py``).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import subprocess
import threading
import time
from collections.abc import Callable, Coroutine, Generator, Iterator
from typing import Any

import httpx2
import mcp
from _slowed_cli import spin

from knime_mcp.caller.table import _Run
from knime_mcp.calls import listing
from knime_mcp.calls.dispatch import Dispatcher
from knime_mcp.mcp.client import McpClient
from knime_mcp.mcp.sync import SyncMcpClient
from knime_mcp.registry import catalog

OURS_ASYNC: tuple[tuple[type, str], ...] = (
    (McpClient, "call_tool"),
    (_Run, "run"),
    (_Run, "_read"),
    (_Run, "_call"),
    (_Run, "_write"),
    (Dispatcher, "call"),
    (listing, "list_http_tools"),
    (catalog, "search_servers"),
)
"""The project's coroutines on the timed paths: a call (figures 1, 2, 8), the Tool Caller's reader, callers and
writer, each a task of its own (figures 4, 7), a call through the dispatcher (a program tool's, 14; a UTCP tool's, 15),
reading a UTCP manual (15c) and a registry search (16). The benchmarks call the two functions through their modules,
so that the wrapped ones run."""

THEIRS: tuple[tuple[type, str], ...] = (
    (mcp.Client, "call_tool"),
    (httpx2.AsyncClient, "send"),
    (subprocess.Popen, "_execute_child"),
)
"""What the peers do as well, not counted as ours: the SDK's call (figures 1-8), an HTTP request and its answer
(``httpx2``, which the project uses; the raw GETs of figure 16 send theirs with ``httpx`` alike; utcp's client of
figure 15 uses aiohttp instead, so there ours is understated and a figure that fails fails all the more) and starting
a process (the raw subprocess of figure 14 starts it alike)."""

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
        """Only the outermost of theirs on a thread counts (an HTTP request inside the SDK's call counts once)."""
        depth = getattr(_state, "their_depth", 0)
        _state.their_depth = depth + 1
        started = time.perf_counter()
        try:
            yield
        finally:
            _state.their_depth = depth
            if not depth:
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
    """``function``, a coroutine function or a plain one, run inside ``step()`` (a coroutine one step at a time)."""
    if not inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            with step():
                return function(*args, **kwargs)

        return timed

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
    originals = [(owner, name, owner.__dict__[name]) for owner, name in (*OURS_ASYNC, *THEIRS)]
    originals += [(SyncMcpClient, "call_tool", SyncMcpClient.__dict__["call_tool"])]
    for owner, name, function in originals[: len(OURS_ASYNC)]:
        setattr(owner, name, _wrapped(function, clock.ours))
    for owner, name, function in originals[len(OURS_ASYNC) : len(OURS_ASYNC) + len(THEIRS)]:
        setattr(owner, name, _wrapped(function, clock.theirs))
    McpClient.call_tool = hand_over.around_async(McpClient.call_tool)  # type: ignore[method-assign]
    SyncMcpClient.call_tool = hand_over.around_sync(SyncMcpClient.call_tool)  # type: ignore[method-assign]
    try:
        yield
    finally:
        for owner, name, function in originals:
            setattr(owner, name, function)
