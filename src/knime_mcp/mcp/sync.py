"""The synchronous facade: KNIME nodes and plain scripts call the async core through one background event loop.

Each operation is written once, in async; this module only forwards. :func:`run_sync` runs one coroutine function
(a whole node execution) and cancels it when ``cancelled()`` turns true, which is how KNIME's cancel button reaches
calls in flight. :class:`SyncMcpClient` keeps one loop and one session for its whole lifetime.

    with SyncMcpClient(ServerSpec(target="http://127.0.0.1:8000/mcp")) as client:
        print(client.call_tool("echo", {"text": "hi"}).text)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import signal
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from types import FrameType, TracebackType
from typing import Any, Generic, TypeVar

import anyio
import anyio.to_thread
from anyio.from_thread import BlockingPortal, start_blocking_portal

from knime_mcp.errors import CancelledByUser
from knime_mcp.mcp.client import McpClient
from knime_mcp.mcp.prompts import MCPPrompt, RenderedPrompt
from knime_mcp.mcp.resources import MCPResource, MCPResourceTemplate, ResourceContent
from knime_mcp.tools.results import ToolResult
from knime_mcp.tools.tool import MCPTool, TaskSupport

__all__ = ["CallerThread", "Interrupt", "ProgressCallback", "SyncMcpClient", "run_sync"]

T = TypeVar("T")

_POLL_SECONDS = 0.1


ProgressCallback = Callable[[float, str], None]


class _LatestProgress:
    """Keeps the newest progress report from the loop thread for the caller's thread to forward."""

    def __init__(self) -> None:
        self._value: tuple[float, str] | None = None

    def __call__(self, fraction: float, message: str) -> None:
        self._value = (fraction, message)

    def take(self) -> tuple[float, str] | None:
        value, self._value = self._value, None
        return value


class CallerThread:
    """Runs blocking functions in the thread that called :func:`run_sync`, for APIs bound to it (KNIME's
    execution context runs workflow tools); the event loop awaits them without blocking other calls.

    A job whose task is cancelled before the caller's thread took it is dropped: once cancelled, :func:`run_sync`
    stops serving jobs, so waiting for it would keep the run from ever ending."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], concurrent.futures.Future[Any]]] = queue.SimpleQueue()

    async def run(self, func: Callable[..., T], *args: Any) -> T:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((partial(func, *args), future))
        try:
            return await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            future.cancel()  # not taken yet: the caller's thread skips it, and the waiting worker thread ends
            raise

    def _serve_pending(self) -> None:
        while True:
            try:
                job, future = self._jobs.get_nowait()
            except queue.Empty:
                return
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job())
            except BaseException as exc:  # handed to the awaiting task, which decides
                future.set_exception(exc)


class Interrupt:
    """Ctrl-C as a stop the run itself takes: :func:`run_sync` asks for it on the event loop instead of cancelling
    the whole run, and the part of the run inside :meth:`stoppable` is cancelled (its calls, on the servers too) and
    goes on to return what it has. Before the run gets there (or after), Ctrl-C cancels the run as without one."""

    def __init__(self) -> None:
        self.asked = False
        """Whether Ctrl-C stopped the run inside :meth:`stoppable`."""
        self._scope: anyio.CancelScope | None = None

    @contextmanager
    def stoppable(self) -> Iterator[None]:
        """The part of the run that Ctrl-C cancels, after which the run goes on."""
        with anyio.CancelScope() as self._scope:
            try:
                yield
            finally:
                self._scope = None

    def ask(self) -> bool:
        """Stop the run (on its event loop); False when it is not inside :meth:`stoppable`."""
        if self._scope is None:
            return False
        self.asked = True
        self._scope.cancel()
        return True


def run_sync(
    func: Callable[..., Awaitable[T]],
    *args: Any,
    cancelled: Callable[[], bool] | None = None,
    progress: ProgressCallback | None = None,
    caller_thread: CallerThread | None = None,
    interrupt: Interrupt | None = None,
    **kwargs: Any,
) -> T:
    """Run ``func(*args, **kwargs)`` on a fresh event loop in a background thread and return its result.

    ``cancelled`` and ``progress`` are called only in the caller's thread (KNIME's context is not meant to be
    used from others): ``cancelled`` is polled ten times a second, and once true the work is cancelled and
    :class:`CancelledByUser` raised; ``func`` receives a ``progress`` keyword whose newest report is forwarded.
    Jobs sent to ``caller_thread`` run here, between polls. Ctrl-C (in the main thread, whose SIGINT handler is
    Python's own) is taken between polls: it cancels the work, which tells the servers of its calls (the sessions
    outlive their calls), and KeyboardInterrupt is raised once it ended; with ``interrupt``, the first Ctrl-C asks
    the run to stop (:class:`Interrupt`) and waits for its result.
    """
    latest = _LatestProgress()
    if progress is not None:
        kwargs["progress"] = latest
    with start_blocking_portal() as portal, _counted_ctrl_c() as ctrl_c:
        future = portal.start_task_soon(partial(func, *args, **kwargs))
        while (result := _poll(future, progress, latest, caller_thread, cancelled)) is _PENDING:
            if ctrl_c.take() and (interrupt is None or interrupt.asked or not portal.call(interrupt.ask)):
                raise KeyboardInterrupt
        return result


_PENDING: Any = object()
"""What :func:`_poll` returns while the work goes on."""


class _CtrlC:
    """The Ctrl-C presses :func:`run_sync` has not taken yet, counted by its SIGINT handler.

    Python's own handler raises KeyboardInterrupt on whatever line the waiting thread is at: one raised between two
    polls escaped the loop's ``except`` and cancelled a run that :class:`Interrupt` should have stopped, so nothing
    of it was printed. Counted presses are taken where the loop looks for them, at most a poll later."""

    def __init__(self) -> None:
        self._pressed = 0
        self._taken = 0

    def press(self, signum: int, frame: FrameType | None) -> None:
        self._pressed += 1

    def take(self) -> bool:
        """Whether Ctrl-C was pressed since the last press taken; takes one."""
        if self._taken == self._pressed:
            return False
        self._taken += 1
        return True


@contextmanager
def _counted_ctrl_c() -> Iterator[_CtrlC]:
    """Count Ctrl-C instead of raising it, in the main thread while its SIGINT handler is Python's own (other
    threads never see KeyboardInterrupt; a program's own handler is left alone). A press nobody took by the end is
    raised then, as KeyboardInterrupt."""
    presses = _CtrlC()
    counting = (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    if counting:
        signal.signal(signal.SIGINT, presses.press)
    try:
        yield presses
    finally:
        if counting:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if presses.take():
        raise KeyboardInterrupt


def _poll(
    future: concurrent.futures.Future[T],
    progress: ProgressCallback | None,
    latest: _LatestProgress,
    caller_thread: CallerThread | None,
    cancelled: Callable[[], bool] | None,
) -> T:
    """One poll of :func:`run_sync`: the result, or :data:`_PENDING` after a while, having served the caller's
    thread meanwhile."""
    try:
        return future.result(timeout=_POLL_SECONDS)
    except concurrent.futures.TimeoutError:
        pass
    except concurrent.futures.CancelledError:
        raise CancelledByUser() from None
    finally:
        if progress is not None and (report := latest.take()) is not None:
            progress(*report)
    if caller_thread is not None:
        caller_thread._serve_pending()
    if cancelled is not None and cancelled():
        future.cancel()
    return _PENDING


class _Handover(Generic[T]):
    """One coroutine run as a task on a loop in another thread, for a caller that blocks until it ends.

    Cheaper than ``asyncio.run_coroutine_threadsafe(...).result()``, which a call of a millisecond notices: no
    second future chained to the task, no condition variable; the caller sleeps on a plain lock that the task's end
    releases. A caller interrupted while it waits (Ctrl-C) cancels the task rather than leaving it running."""

    __slots__ = ("_coro", "_done", "_loop", "_task")

    def __init__(self, loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> None:
        self._loop, self._coro = loop, coro
        self._task: asyncio.Task[T] | None = None
        self._done = threading.Lock()
        self._done.acquire()

    def result(self) -> T:
        self._loop.call_soon_threadsafe(self._start)
        try:
            self._done.acquire()
        except BaseException:
            self._loop.call_soon_threadsafe(self._cancel)  # runs after _start: the task exists by then
            raise
        assert self._task is not None
        if self._task.cancelled():
            raise concurrent.futures.CancelledError()  # what run_coroutine_threadsafe's future raised
        return self._task.result()

    def _start(self) -> None:
        self._task = self._loop.create_task(self._coro)
        self._task.add_done_callback(self._end)

    def _end(self, task: asyncio.Task[T]) -> None:
        self._done.release()

    def _cancel(self) -> None:
        assert self._task is not None
        self._task.cancel()


class SyncMcpClient(AbstractContextManager["SyncMcpClient"]):
    """A blocking :class:`McpClient`: one event loop thread and one session for the client's lifetime.

    The portal opens and closes the session; calls go straight to its asyncio loop, without the portal's task
    group and cancel scope around each, which a call of a millisecond would notice."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._client = McpClient(*args, **kwargs)
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session_cm: AbstractContextManager[McpClient] | None = None

    def __enter__(self) -> SyncMcpClient:
        self._portal_cm = start_blocking_portal(backend="asyncio")
        portal = self._portal_cm.__enter__()
        try:
            self._session_cm = portal.wrap_async_context_manager(self._client)
            self._session_cm.__enter__()
            self._loop = portal.call(asyncio.get_running_loop)
        except BaseException as exc:
            self._portal_cm.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._portal_cm is not None and self._session_cm is not None
        self._loop = None
        try:
            self._session_cm.__exit__(exc_type, exc, tb)
        finally:
            self._portal_cm.__exit__(exc_type, exc, tb)

    def _call(self, func: Callable[..., Coroutine[Any, Any, T]], *args: Any, **kwargs: Any) -> T:
        if self._loop is None:
            raise RuntimeError("Open the SyncMcpClient with 'with' before using it.")
        return _Handover(self._loop, func(*args, **kwargs)).result()

    def list_tools(self) -> list[MCPTool]:
        return self._call(self._client.list_tools)

    def call_tool(
        self,
        tool_name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        task_support: TaskSupport = "forbidden",
        tasks: bool = False,
    ) -> ToolResult:
        """:meth:`McpClient.call_tool`; a listed tool's ``task_support`` makes it run as an MCP task."""
        call = self._client.call_tool
        return self._call(call, tool_name, arguments, timeout=timeout, task_support=task_support, tasks=tasks)

    def list_resources(self) -> list[MCPResource]:
        return self._call(self._client.list_resources)

    def list_resource_templates(self) -> list[MCPResourceTemplate]:
        return self._call(self._client.list_resource_templates)

    def read_resource(self, uri: str, *, max_bytes: int | None = None) -> list[ResourceContent]:
        return self._call(self._client.read_resource, uri, max_bytes=max_bytes)

    def list_prompts(self) -> list[MCPPrompt]:
        return self._call(self._client.list_prompts)

    def get_prompt(self, prompt: str | MCPPrompt, arguments: Mapping[str, str] | None = None) -> RenderedPrompt:
        return self._call(self._client.get_prompt, prompt, arguments)
