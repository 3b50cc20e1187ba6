"""The dispatcher every node shares: one tool call in, one :class:`CallOutcome` out, never an exception.

It validates arguments against the tool's input schema, calls MCP tools over the run's :class:`ClientPool` (one
session per server), sends HTTP tools' requests (:mod:`knime_mcp.http`) over the same pool, or runs a
:class:`LocalTool` (a KNIME workflow tool), retries only calls that are safe to repeat, and writes a
:class:`CallRecord` for the tool-call log. Whether a failed call stops the run is the caller's policy (the agent's
and the Tool Caller's "fail" setting), decided in one place: :meth:`CallOutcome.raise_for_error`.

    async with ClientPool() as pool:
        outcome = await Dispatcher(pool).call(tool, {"text": "hi"})
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from knime_mcp.errors import (
    CircuitOpenError,
    McpToolError,
    OutcomeUnknownError,
    ServerAuthError,
    ServerBusyError,
    ServerConnectError,
    ToolCallError,
    ToolError,
    ToolTimeoutError,
)
from knime_mcp.http.call import BusyResponse, http_retry_safe
from knime_mcp.http.output_check import checked_output
from knime_mcp.mcp.server_requests import progress_text
from knime_mcp.redaction import redact
from knime_mcp.tools.argument_validation import validate_arguments
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.results import ToolResult
from knime_mcp.tools.tool import MCPTool
from knime_mcp.tools.tool_columns import OWN_TIMEOUT_HINT, RAISE_CALL_TIMEOUT

if TYPE_CHECKING:
    from tenacity import RetryCallState

    from knime_mcp.calls.pool import ClientPool
    from knime_mcp.mcp.app_resource import AppResource
    from knime_mcp.tools.annotations import ToolAnnotations
    from knime_mcp.tools.http_operation import HttpOperation

__all__ = [
    "CallOutcome", "CallRecord", "CallStatus", "Dispatcher", "LocalTool", "RetryPolicy", "ToolProgress", "redact"
]  # fmt: skip

CallStatus = Literal[
    "ok", "tool_error", "invalid_arguments", "unknown_tool", "blocked", "timeout", "connection_error", "failed",
    "tools_changed", "denied", "awaiting_approval", "cancelled",
]  # fmt: skip
"""How a call ended; ``tools_changed`` marks the tool-call log's note that a server's tool list changed; ``denied``
and ``awaiting_approval`` are the agent's calls a person denied, or that wait for a person's approval; ``cancelled``
a call a person stopped (the chat's *Stop*)."""

ToolProgress = Callable[[str, str], None]
"""Hears the progress of MCP tool calls: ``(tool name, progress line)``."""


@dataclass(frozen=True, kw_only=True)
class LocalTool:
    """A tool that runs in this process rather than on an MCP server: a KNIME workflow tool, for instance."""

    name: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[dict[str, Any]], Awaitable[ToolResult]]
    kind: str = "workflow"
    annotations: ToolAnnotations | None = None
    """Behaviour hints for the approval rules, as an MCP tool's are judged: ``ToolAnnotations()`` for a tool that may
    do anything (a skill's script: judged as a tool without annotations); None for one the annotation rules do not
    judge (a workflow tool, or a tool of the agent's own that only reads)."""

    @property
    def parameter_schema(self) -> dict[str, Any]:
        return self.input_schema


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """Retries for calls that are safe to repeat (read-only or idempotent tools) after transient failures."""

    attempts: int = 1
    """Total attempts including the first; 1 means no retry."""

    initial_wait: float = 0.5
    """Seconds before the first retry; each later wait is drawn from an exponentially growing range (jitter)."""

    max_wait: float = 10.0

    def wait(self, state: RetryCallState) -> float:
        """Exponential backoff with jitter, or the server's Retry-After when it asks for longer (at most
        :data:`~knime_mcp.errors.MAX_RETRY_AFTER_SECONDS`: :func:`_retryable` retries no call asked to wait longer)."""
        from tenacity import wait_random_exponential

        backoff = wait_random_exponential(multiplier=self.initial_wait, max=self.max_wait)(state)
        error = state.outcome.exception() if state.outcome else None
        retry_after = getattr(error, "retry_after", None)
        return max(backoff, retry_after) if retry_after is not None else backoff


@dataclass(frozen=True, kw_only=True)
class CallRecord:
    """One row of the tool-call log; arguments are redacted, errors carry no secrets."""

    tool: str
    kind: str
    server: str | None
    arguments: dict[str, Any]
    status: CallStatus
    error: str | None
    duration_ms: float
    attempts: int = 1

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments, ensure_ascii=False, default=str)

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "arguments": self.arguments_json}


@dataclass(frozen=True, kw_only=True)
class CallOutcome:
    result: ToolResult | None
    record: CallRecord
    error: McpToolError | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.record.status == "ok"

    def raise_for_error(self) -> None:
        """Fail-fast policy: turn a failed call into its error."""
        if self.error is not None:
            raise self.error
        if self.result is not None and self.result.is_error:
            message = f"Tool {self.record.tool!r} reported an error: {self.record.error}"
            raise ToolCallError(message, server=self.record.server)


def _status(error: McpToolError) -> CallStatus:
    match error:
        case ToolTimeoutError():
            return "timeout"
        case ServerConnectError() | OutcomeUnknownError():
            return "connection_error"
        case ToolError():
            return "tool_error"
        case _:
            return "failed"


def _retryable(error: BaseException) -> bool:
    """Transient failures only: a timeout, a refused or lost connection (also one that cut a call off, which only
    safe-to-repeat tools are retried after), 429 or 5xx unless the server asked to wait longer than knime-mcp waits;
    never a bad setting, nor a call the circuit breaker did not make."""
    if isinstance(error, ServerAuthError | CircuitOpenError):
        return False
    if isinstance(error, ServerBusyError) and error.too_long_to_wait:
        return False
    return isinstance(error, ToolTimeoutError | ServerConnectError | OutcomeUnknownError)


def _report_progress(
    report: ToolProgress, tool: str, done: float | None, total: float | None, message: str | None
) -> None:
    report(tool, progress_text(done, total, message))


class Dispatcher:
    """Runs tool calls for one run; safe to use from many tasks at once."""

    def __init__(
        self,
        pool: ClientPool,
        *,
        timeout: float | None = None,
        retry: RetryPolicy | None = None,
        policy: ToolPolicy | None = None,
        progress: ToolProgress | None = None,
        tasks: bool = False,
    ) -> None:
        """``tasks``: *Run long tools as tasks*: a tool whose taskSupport is ``optional`` runs as an MCP task too
        (one that requires it always does, :mod:`knime_mcp.mcp.tasks`)."""
        self._pool = pool
        self._tasks = tasks
        self._progress = progress
        self._timeout = timeout
        self._retry = retry or RetryPolicy()
        self._policy = policy

    def _refusal(
        self, tool: MCPTool | LocalTool, arguments: Mapping[str, Any]
    ) -> tuple[McpToolError | None, CallStatus]:
        """Why the call must not be made at all: the tool policy blocks it, or its arguments break the schema."""
        reason = self._policy.check(tool) if self._policy is not None and isinstance(tool, MCPTool) else None
        if reason is not None:
            return ToolCallError(f"The call was not made: {reason}."), "blocked"
        problems = validate_arguments(tool, arguments)
        if problems:
            error = ToolCallError(
                f"Invalid arguments for tool {tool.name!r}: {'; '.join(problems)}",
                hint="Call the tool again with arguments that match its input schema.",
            )
            return error, "invalid_arguments"
        return None, "ok"

    async def call(self, tool: MCPTool | LocalTool, arguments: Mapping[str, Any]) -> CallOutcome:
        started = time.perf_counter()
        attempts = 0
        result: ToolResult | None = None
        error, status = self._refusal(tool, arguments)
        if error is None:
            try:
                result, attempts = await self._invoke(tool, dict(arguments))
            except McpToolError as exc:
                error, status = exc, _status(exc)
                attempts = getattr(exc, "attempts", 1)
            if result is not None and result.is_error:
                status = "tool_error"
        record = CallRecord(
            tool=tool.name,
            kind=tool.kind,
            server=tool.server.display_name if isinstance(tool, MCPTool) else None,
            arguments=redact(arguments),
            status=status,
            error=str(error) if error else (result.error_text if result and result.is_error else None),
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
            attempts=max(attempts, 1),
        )
        return CallOutcome(result=result, record=record, error=error)

    async def read_app(self, tool: MCPTool) -> AppResource:
        """The MCP App of ``tool`` (its :attr:`~MCPTool.app_uri`), read from its server's session and vetted; a
        :class:`~knime_mcp.errors.ResourceError` (or the connection's error) when it cannot be shown."""
        from knime_mcp.mcp.app_resource import read_app_resource

        if tool.app_uri is None:
            raise ToolCallError(f"Tool {tool.name!r} has no app.")
        return await read_app_resource(await self._pool.client(tool.server), tool.app_uri)

    async def _invoke(self, tool: MCPTool | LocalTool, arguments: dict[str, Any]) -> tuple[ToolResult, int]:
        if isinstance(tool, LocalTool):
            return await tool.run(arguments), 1
        if tool.http is not None:
            return await self._invoke_http(tool, tool.http, arguments)
        if tool.program is not None:
            return await self._invoke_program(tool, arguments), 1
        attempts = self._retry.attempts if tool.annotations.retry_safe else 1
        if attempts <= 1:
            return await self._call_mcp(tool, arguments, resend_lost=tool.annotations.retry_safe), 1
        return await self._with_retries(partial(self._call_mcp, tool, arguments, resend_lost=False), attempts)

    async def _invoke_http(
        self, tool: MCPTool, operation: HttpOperation, arguments: dict[str, Any]
    ) -> tuple[ToolResult, int]:
        """An HTTP tool's request, retried like an MCP call but by its method (:func:`http_retry_safe`); a 429 or
        5xx answer not retried (any more) is the tool error it carries; a webhook's answer is held to its Output
        Schema (:func:`checked_output`)."""
        client = await self._pool.http_client(tool.server)
        send = partial(client.call, tool.tool_name, operation, arguments, timeout=self._timeout_of(tool))
        attempts = self._retry.attempts if http_retry_safe(operation, tool.annotations.idempotent) else 1
        try:
            result, attempts = await self._with_retries(send, attempts)
        except BusyResponse as busy:
            return busy.result, busy.attempts  # type: ignore[attr-defined]
        if operation.checks_output and tool.output_schema is not None:
            result = checked_output(result, tool.output_schema)
        return result, attempts

    async def _invoke_program(self, tool: MCPTool, arguments: dict[str, Any]) -> ToolResult:
        """A program tool's run (:mod:`knime_mcp.programs`), never repeated (a program may change anything), under
        the tool's own *Timeout (s)*, else the program's timeout; a program from data is refused first."""
        from knime_mcp.programs import program_of, run_program

        await self._pool.check_program(tool.server)
        try:
            program = program_of(tool)
            return await run_program(program, arguments, timeout=tool.timeout, credentials=self._pool.credentials)
        except ToolTimeoutError as exc:
            if tool.timeout is not None:  # the tool's own timeout ran out: say where it is set
                exc.hint = OWN_TIMEOUT_HINT
            raise

    def _timeout_of(self, tool: MCPTool) -> float | None:
        """The tool's own timeout (a tools table's *Timeout (s)* column), else this run's."""
        return self._timeout if tool.timeout is None else tool.timeout

    async def _call_mcp(self, tool: MCPTool, arguments: dict[str, Any], *, resend_lost: bool) -> ToolResult:
        """``resend_lost``: let the client resend a call cut off by a lost session; off when this dispatcher's own
        retries do it, so that every send is one counted attempt."""
        client = await self._pool.client(tool.server)
        progress = None if self._progress is None else partial(_report_progress, self._progress, tool.name)
        try:
            return await client.call_tool(
                tool.tool_name,
                arguments,
                timeout=self._timeout_of(tool),
                repeatable=resend_lost,
                progress=progress,
                task_support=tool.task_support,
                tasks=self._tasks,
            )
        except ToolTimeoutError as exc:
            if tool.timeout is not None and exc.hint:  # the tool's own timeout ran out: say where it is set
                exc.hint = exc.hint.replace(RAISE_CALL_TIMEOUT, OWN_TIMEOUT_HINT)
            raise

    async def _with_retries(self, send: Callable[[], Awaitable[ToolResult]], attempts: int) -> tuple[ToolResult, int]:
        """``send()`` up to ``attempts`` times while it fails transiently. The first attempt runs without tenacity:
        nearly every call succeeds at once, and tenacity's bookkeeping cost a row-by-row run about 30 µs a call."""
        try:
            return await send(), 1
        except McpToolError as exc:
            if attempts <= 1 or not _retryable(exc):
                exc.attempts = 1  # type: ignore[attr-defined]
                raise
            failure = exc
        return await self._retry_after(failure, send, attempts)

    async def _retry_after(
        self, failure: McpToolError, send: Callable[[], Awaitable[ToolResult]], attempts: int
    ) -> tuple[ToolResult, int]:
        """The attempts after a first ``failure``. Tenacity's first attempt replays that failure, so its waits (and
        a Retry-After the failure carries) and its attempt numbers are what they would be had it made the call."""
        from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

        replayed: list[McpToolError] = [failure]

        async def attempt() -> ToolResult:
            if replayed:
                raise replayed.pop()
            return await send()

        retrying = AsyncRetrying(
            stop=stop_after_attempt(attempts),
            wait=self._retry.wait,
            retry=retry_if_exception(_retryable),
            reraise=True,
        )
        number = 0
        try:
            async for attempt_state in retrying:
                with attempt_state:
                    number = attempt_state.retry_state.attempt_number
                    return await attempt(), number
        except McpToolError as exc:
            exc.attempts = number  # type: ignore[attr-defined]
            raise
        raise AssertionError("tenacity ended without a result or an error")
