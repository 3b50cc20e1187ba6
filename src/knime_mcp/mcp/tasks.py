"""Tool calls that run as MCP tasks (protocol 2025-11-25, ``execution.taskSupport``): create, poll, fetch, cancel.

A tool with taskSupport ``required`` always runs as a task, an ``optional`` one when the run asks for tasks (*Run
long tools as tasks*) and the server offers task-augmented ``tools/call``. The task is polled with ``tasks/get`` at
the poll interval the server gives with its latest status (:func:`_poll_wait`), without backing off: the result is
seen within one interval of the task's end, however long it ran. Each new status message goes to the call's progress
(its first :data:`MAX_STATUS_CHARS`); ``input_required`` and ``completed`` fetch ``tasks/result``, which the server
answers once the task ends (while it waits, the forms and sampling it asks for arrive as ordinary server requests and
the run's policy answers them). A task cut off (timeout, KNIME cancel, Ctrl-C, agent stop) is cancelled on the server
with ``tasks/cancel``, also when the call was cut off before the server named the task; a server that refuses (the
task ended meanwhile) changes nothing: the call is still the timeout or the cancel.

mcp 2.3.0 has the task types but leaves tasks out of its per-version result table, so the typed ``send_request``
checks a ``tools/call`` answer against CallToolResult and refuses the CreateTaskResult. That one request is sent
through the session's own dispatcher, with the SDK's request model and its stamp (the protocol-version header);
every other task request goes through ``send_request``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import anyio
import mcp_types
from mcp.client.session import ClientSession

from knime_mcp.errors import ToolCallError
from knime_mcp.tools.tool import TaskSupport

__all__ = [
    "DEFAULT_POLL_SECONDS", "MAX_POLL_SECONDS", "MAX_STATUS_CHARS", "MIN_POLL_SECONDS", "StatusReport", "capped",
    "runs_as_task", "run_task", "task_calls_offered",
]  # fmt: skip

logger = logging.getLogger(__name__)

DEFAULT_POLL_SECONDS = 1.0
"""The wait between polls when the server names no interval: the TypeScript SDK's client waits as long (its
``defaultTaskPollInterval``, also what its task store gives a task created without one), so a server written
against it is polled at the pace it was tried with; a task's end is seen within a second, and a task of hours costs
one small request a second."""

MIN_POLL_SECONDS = 0.05
"""The shortest wait between polls, whatever the server asks: an interval of 0 would otherwise send ``tasks/get``
back to back for as long as the task runs."""

MAX_POLL_SECONDS = 5.0
"""The longest wait between polls (and at most a quarter of the call timeout, so that a new status is seen in time
to extend it), whatever the server asks: a task is seen within 5 s of its end, and an interval of an hour would
otherwise let the call time out before the task was ever polled."""

MAX_STATUS_CHARS = 1024
"""The most of a status (or progress) message a server's text is shown with, the cut marked: a server may send a
message of any length, and it lands in a progress line, a log entry or an error."""

CANCEL_SECONDS = 5.0
"""How long ``tasks/cancel`` may take while the call is being given up (shielded from the cancellation)."""

StatusReport = Callable[[str], Awaitable[None]]
"""Hears each new status message of a task, as the server sent it (the caller masks and caps it)."""


def capped(text: str) -> str:
    """``text`` cut to :data:`MAX_STATUS_CHARS`, the cut marked with an ellipsis."""
    return text if len(text) <= MAX_STATUS_CHARS else text[: MAX_STATUS_CHARS - 1] + "…"


def runs_as_task(support: TaskSupport, tasks_on: bool) -> bool:
    """Whether a tool is called as a task: always when it requires it, when the run asks when it allows it."""
    return support == "required" or (support == "optional" and tasks_on)


def _tasks(session: ClientSession) -> mcp_types.ServerTasksCapability | None:
    capabilities = session.server_capabilities
    return capabilities.tasks if capabilities else None


def task_calls_offered(session: ClientSession) -> bool:
    """Whether the server declared task-augmented tool calls (``tasks.requests.tools.call``)."""
    tasks = _tasks(session)
    tools = tasks.requests.tools if tasks and tasks.requests else None
    return tools is not None and tools.call is not None


def _cancel_offered(session: ClientSession) -> bool:
    tasks = _tasks(session)
    return tasks is not None and tasks.cancel is not None


async def run_task(
    session: ClientSession,
    name: str,
    arguments: dict[str, Any],
    *,
    timeout: float,
    server: str,
    meta: dict[str, Any] | None,
    on_status: Callable[[], None],
    report: StatusReport | None,
) -> mcp_types.CallToolResult:
    """Call tool ``name`` as a task and return its result as a plain call's. ``timeout`` bounds each request;
    the caller's cancel scope bounds the whole task. ``on_status`` hears that the task moved (to extend the call's
    deadline), ``report`` each new status message."""
    creation = _Creation()
    try:
        task = await creation.run(partial(_create, session, name, arguments, timeout=timeout, meta=meta))
        return await _follow(session, name, task, timeout=timeout, on_status=on_status, report=report, server=server)
    except BaseException:
        if creation.task is not None:
            await _cancel(session, creation.task.task_id, timeout=timeout, server=server)
        raise


class _Creation:
    """A task's creation, carried through a cancellation of the call for up to :data:`CANCEL_SECONDS` more: only the
    server's answer names the task, and a task whose name was lost would run on with nobody to cancel it."""

    def __init__(self) -> None:
        self.task: mcp_types.Task | None = None
        """The task, once the server named it (also when the call was given up meanwhile)."""

    async def run(self, create: Callable[[], Awaitable[mcp_types.Task]]) -> mcp_types.Task:
        failure: Exception | None = None
        async with anyio.create_task_group() as watch:
            with anyio.CancelScope(shield=True) as creating:
                watch.start_soon(self._bound, creating)
                try:
                    self.task = await create()
                except Exception as exc:  # raised past the task group, which would wrap it in a group
                    failure = exc
                watch.cancel_scope.cancel()
        if failure is not None:
            raise failure
        assert self.task is not None
        return self.task

    @staticmethod
    async def _bound(creating: anyio.CancelScope) -> None:
        """Outside the shield, so it hears the call given up: from then on the creation may take a while more."""
        try:
            await anyio.sleep_forever()
        finally:
            creating.deadline = min(creating.deadline, anyio.current_time() + CANCEL_SECONDS)


async def _cancel(session: ClientSession, task_id: str, *, timeout: float, server: str) -> None:
    """``tasks/cancel`` for a task given up on, shielded from the cancellation that gave it up. Whatever the server
    answers leaves the call's own end as it is: a refusal (a task that ended meanwhile, which the SDK's servers do not
    cancel) or no answer says nothing about the session, and the timeout or cancel is what the caller is told."""
    if not _cancel_offered(session):
        return
    with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_SECONDS):
        try:
            await _send(session, mcp_types.CancelTaskRequest, task_id, mcp_types.CancelTaskResult, timeout)
        except Exception as exc:  # the server's text may quote anything: only its kind and code are logged
            code = getattr(getattr(exc, "error", None), "code", None)
            logger.debug("%s: tasks/cancel of task %s was not done (%s %s)", server, task_id, type(exc).__name__, code)


async def _create(
    session: ClientSession, name: str, arguments: dict[str, Any], *, timeout: float, meta: dict[str, Any] | None
) -> mcp_types.Task:
    request = mcp_types.CallToolRequest(
        params=mcp_types.CallToolRequestParams(
            name=name, arguments=arguments, task=mcp_types.TaskMetadata(), _meta=meta
        )
    )
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    options: dict[str, Any] = {"timeout": timeout}
    session._stamp(data, options)  # type: ignore[arg-type]  # noqa: SLF001 - see the module docstring
    raw = await session._dispatcher.send_raw_request(data["method"], data.get("params"), options)  # type: ignore[arg-type]  # noqa: SLF001
    return mcp_types.CreateTaskResult.model_validate(raw, by_name=False).task


async def _send(session: ClientSession, kind: type, task_id: str, result: type, timeout: float | None) -> Any:
    """One of the task requests (``tasks/get``, ``tasks/result``, ``tasks/cancel``) about ``task_id``."""
    params = kind.model_fields["params"].annotation(task_id=task_id)
    return await session.send_request(kind(params=params), result, request_read_timeout_seconds=timeout)


async def _follow(
    session: ClientSession,
    name: str,
    task: mcp_types.Task,
    *,
    timeout: float,
    on_status: Callable[[], None],
    report: StatusReport | None,
    server: str,
) -> mcp_types.CallToolResult:
    """Poll ``task`` until it needs input or ends, then fetch its result."""
    last: tuple[str, str | None] | None = None
    while True:
        if (task.status, task.status_message) != last:
            if report is not None and task.status_message and task.status_message != (last and last[1]):
                await report(task.status_message)
            last = (task.status, task.status_message)
            on_status()
        if task.status in ("failed", "cancelled"):
            raise _ended_error(name, task, server)
        if task.status in ("completed", "input_required"):
            return await _send(session, mcp_types.GetTaskPayloadRequest, task.task_id, mcp_types.CallToolResult, None)
        await anyio.sleep(_poll_wait(task.poll_interval, timeout))
        task = await _send(session, mcp_types.GetTaskRequest, task.task_id, mcp_types.GetTaskResult, timeout)


def _poll_wait(poll_interval_ms: int | None, timeout: float) -> float:
    """Seconds to wait before the next ``tasks/get``: the server's ``pollInterval`` (milliseconds) or
    :data:`DEFAULT_POLL_SECONDS`, held between :data:`MIN_POLL_SECONDS` and :data:`MAX_POLL_SECONDS` and to a
    quarter of the call ``timeout``. The same every time while the status stays the same: a wait that grew would see
    a task's end up to that much later than the server offered."""
    asked = DEFAULT_POLL_SECONDS if poll_interval_ms is None else poll_interval_ms / 1000
    return min(max(asked, MIN_POLL_SECONDS), MAX_POLL_SECONDS, timeout / 4)


def _ended_error(name: str, task: mcp_types.Task, server: str) -> ToolCallError:
    said = f": {capped(task.status_message)}" if task.status_message else ""
    if task.status == "cancelled":
        return ToolCallError(
            f"The task of tool {name!r} was cancelled on the server{said}.",
            server=server,
            hint="Call the tool again; if the server keeps cancelling it, check the server's log.",
        )
    return ToolCallError(
        f"The task of tool {name!r} failed{said}.",
        server=server,
        hint="Check the arguments and the server's log, then call the tool again.",
    )
