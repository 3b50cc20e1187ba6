"""The Tool Caller engine: one call of an MCP tool for every row of a table, in row order, over one session.

Layer: above the dispatcher (argument validation, retries, the run's :class:`ClientPool`, one session per server)
and :mod:`knime_mcp.caller.arguments` (row to arguments); below the KNIME node and the CLI, which hand in batches and
take result batches. Each output batch is its input batch (RecordBatch, Table or DataFrame) plus the result columns of
:data:`RESULT_COLUMNS`, and is handed to the sink as soon as its rows are done, in input order. A bounded window of
batches is in memory at once, however long the table; ``concurrency`` calls run at a time over the one session for
a tool annotated read-only (or idempotent and not destructive), one at a time for any other tool unless
``concurrent_writes`` is set: overlapping calls of a tool that writes can lose each other's changes.

On errors: ``fail`` stops at the first failed row in row order and raises its error with the row number;
``column`` writes each row's error into the error columns and goes on, so no row is lost. A server that cannot be
reached before the first row fails the run; one that dies during it trips the client's circuit breaker, so the
remaining rows fail fast with its error instead of each waiting for a connection.

    summary = call_table_sync(tool, table.batches(), output.append, options=CallerOptions(concurrency=8))
    async with ClientPool() as pool:
        await call_table(tool, batches, sink, pool=pool)
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from knime_mcp.caller.arguments import ArgumentError, ArgumentMapping, ArgumentPlan, parse_template
from knime_mcp.caller.batches import RESULT_COLUMNS, PendingBatch, RowResult, record_batch, result_columns
from knime_mcp.calls.dispatch import Dispatcher, RetryPolicy
from knime_mcp.calls.pool import ClientPool
from knime_mcp.calls.rows import InputBatches, OnError, check_on_error
from knime_mcp.config import CredentialLookup, ElicitationMode, ServerRequestPolicy
from knime_mcp.errors import ConfigError, McpToolError
from knime_mcp.mcp.server_requests import ServerRequests
from knime_mcp.mcp.sync import ProgressCallback, run_sync
from knime_mcp.tools.permissions import ALL_PERMISSIONS, Permission
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.tool import MCPTool

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "RESULT_COLUMNS",
    "CallSummary",
    "CallerOptions",
    "DEFAULT_CONCURRENCY",
    "call_table",
    "call_table_sync",
    "result_columns",
]

DEFAULT_CONCURRENCY = 4
"""Calls at once for a tool that is safe to call concurrently; other tools run one at a time by default."""

_BATCHES_AHEAD = 2
"""Input batches read ahead of the one being written: enough to keep every call slot busy across batch borders."""


@dataclass(frozen=True, kw_only=True)
class CallerOptions:
    """How the Tool Caller calls: one value shared by the node, the CLI and the tests.

    CallerOptions(mapping='{"text": "{comment}"}', concurrency=8, on_error="column")
    """

    mapping: ArgumentMapping = None
    """Which column feeds which parameter (see :class:`~knime_mcp.caller.arguments.ArgumentPlan`); None: by name."""

    concurrency: int = DEFAULT_CONCURRENCY
    """Calls in flight at once, all over the one session, for a tool annotated read-only, or idempotent and not
    destructive (:attr:`~knime_mcp.tools.tool.ToolAnnotations.concurrency_safe`)."""

    concurrent_writes: bool = False
    """Run any other tool ``concurrency`` calls at a time too. Off, such a tool gets one call at a time: a server
    that reads, changes and writes back one store (a file, a graph) can lose the changes of overlapping calls."""

    timeout: float | None = None
    """Seconds per call; None: the server's call timeout (:class:`~knime_mcp.config.Timeouts`)."""

    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """Retries after timeouts and connection errors, only for read-only or idempotent tools."""

    on_error: OnError = "fail"
    """``fail``: stop at the first failed row. ``column``: record each row's error and go on."""

    trust_all_servers: bool = False
    """Connect to the tool's server as it is; by default it is checked first unless sealed on this machine, as
    with :attr:`knime_mcp.agent.loop.AgentConfig.trust_all_servers`."""

    elicitation: ElicitationMode = "decline"
    """A form the tool asks for while it runs: declined (the row fails), or answered with its defaults when every
    field has one (see :mod:`knime_mcp.mcp.server_requests`)."""

    tasks: bool = False
    """*Run long tools as tasks*: a tool whose taskSupport is ``optional`` runs as an MCP task too (one that requires
    it always does); many tasks run at once within the concurrency."""

    granted: tuple[Permission, ...] = ALL_PERMISSIONS
    """*Granted permissions* (:mod:`knime_mcp.tools.permissions`): a tool needing another is not called (nor its
    server started or reached); every row fails, naming the permission missing."""

    @property
    def policy(self) -> ToolPolicy:
        """The grants as the dispatcher checks them before every call; the Tool Caller has no other tool policy."""
        return ToolPolicy.granting(self.granted)

    def concurrency_for(self, tool: MCPTool) -> int:
        """How many calls of ``tool`` run at once."""
        return self.concurrency if self.concurrent_writes or tool.annotations.concurrency_safe else 1

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError(f"Concurrency must be at least 1, not {self.concurrency}.")
        check_on_error(self.on_error)
        if self.timeout is not None and self.timeout <= 0:
            raise ConfigError("The call timeout must be a positive number of seconds.")
        if isinstance(self.mapping, str) and self.mapping.strip():
            parse_template(self.mapping)
        object.__setattr__(self, "granted", self.policy.granted)  # checked, and in the order of ALL_PERMISSIONS


@dataclass(frozen=True)
class CallSummary:
    """What a run did: rows called (or skipped for bad arguments), rows that failed, batches written."""

    rows: int
    errors: int
    batches: int


class _Run:
    """The state one :func:`call_table` run shares between its reader, its callers and its writer."""

    def __init__(
        self,
        tool: MCPTool,
        options: CallerOptions,
        pool: ClientPool,
        sink: Callable[[pa.RecordBatch], Awaitable[None]],
        progress: ProgressCallback | None,
        total_rows: int | None,
    ) -> None:
        self.tool, self.options, self.pool = tool, options, pool
        self.dispatcher = Dispatcher(
            pool,
            timeout=options.timeout,
            retry=options.retry,
            policy=options.policy,
            progress=self._report_tool,
            tasks=options.tasks,
        )
        self.refused = options.policy.check(tool) is not None
        """The tool needs a permission not granted: its server is never reached, and every row says why."""
        self.sink, self.progress, self.total_rows = sink, progress, total_rows
        self.stop: int | None = None
        """``fail`` mode: the first failed row seen so far; no row after it is dispatched."""
        self.plan: ArgumentPlan | None = None
        self.names: list[str] = []
        self.rows = self.errors = self.batches = 0

    async def run(self, batches: AsyncIterator[Any]) -> CallSummary:
        jobs_send, jobs = anyio.create_memory_object_stream[PendingBatch](_BATCHES_AHEAD)
        rows_send, rows = anyio.create_memory_object_stream[tuple[PendingBatch, int]]()
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._read, batches, jobs_send, rows_send)
                with rows:
                    for _ in range(self.options.concurrency_for(self.tool)):
                        tasks.start_soon(self._call, rows.clone())
                await self._write(jobs)
        except BaseExceptionGroup as group:
            raise _sole(group) from None
        return CallSummary(self.rows, self.errors, self.batches)

    def _prepare(self, data: pa.RecordBatch, first_row: int) -> PendingBatch:
        if self.plan is None:
            self.plan = ArgumentPlan(self.tool, data.schema.names, self.options.mapping)
            self.names = [name for name, _ in result_columns(data.schema.names)]
        return PendingBatch(data, first_row, self.plan)

    async def _read(self, batches: AsyncIterator[Any], jobs: Any, rows: Any) -> None:
        async with jobs, rows:
            first_row = 0
            async for data in batches:
                job = self._prepare(record_batch(data), first_row)
                if first_row == 0 and job.size and self.tool.kind == "mcp" and not self.refused:
                    # The first batch with rows: connect before its first row, so no row's duration includes the
                    # handshake. A table without rows never contacts the server; an HTTP tool has no handshake.
                    await self.pool.client(self.tool.server)
                await jobs.send(job)
                for row, arguments in enumerate(job.arguments):
                    if self.stop is not None:
                        return
                    if isinstance(arguments, ArgumentError):
                        self._finish(job, row, RowResult.invalid(arguments, job.label(row)))
                    else:
                        await rows.send((job, row))
                first_row += job.size

    async def _call(self, rows: Any) -> None:
        async with rows:
            async for job, row in rows:
                outcome = await self.dispatcher.call(self.tool, job.arguments[row])
                label = partial(job.label, row)
                if outcome.result is not None and outcome.result.images:
                    # Decoding an image (and converting it to PNG) would hold up the other calls' I/O meanwhile.
                    result = await anyio.to_thread.run_sync(RowResult.from_outcome, outcome, label)
                else:
                    result = RowResult.from_outcome(outcome, label)
                self._finish(job, row, result)

    def _finish(self, job: PendingBatch, row: int, result: RowResult) -> None:
        number = job.first_row + row
        if result.is_error and self.options.on_error == "fail" and (self.stop is None or number < self.stop):
            self.stop = number
            job.watched = True
            job.changed.set()
        job.finish(row, result)

    async def _write(self, jobs: Any) -> None:
        async with jobs:
            async for job in jobs:
                while not job.settled(self.stop):
                    await job.changed.wait()
                    job.changed = anyio.Event()
                failure = job.first_failure() if self.options.on_error == "fail" else None
                if failure is not None:
                    raise failure
                await self.sink(job.output(self.names))
                self.rows += job.size
                self.errors += sum(1 for result in job.results if result is not None and result.is_error)
                self.batches += 1
                self._report()

    def _report(self, activity: str | None = None) -> None:
        if self.progress is None:
            return
        fraction = min(self.rows / self.total_rows, 1.0) if self.total_rows else 0.0
        called = f"{self.rows:,} of {self.total_rows:,}" if self.total_rows else f"{self.rows:,}"
        called += " rows called"
        self.progress(fraction, f"{called}; {activity}" if activity else called)

    def _report_tool(self, tool: str, text: str) -> None:
        """A long call's progress notifications, after the rows written so far."""
        self._report(f"tool {tool}: {text}")


def _sole(group: BaseExceptionGroup) -> BaseException:
    """The error that ended the run. Several calls in flight can meet the same lost server at once; their errors
    say the same, so the first is raised. A group without errors of ours is a bug, and is raised whole."""
    errors = list(_leaves(group))
    ours = [error for error in errors if isinstance(error, McpToolError)]
    if ours:
        return ours[0]
    return errors[0] if len(errors) == 1 else group


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


async def call_table(
    tool: MCPTool,
    batches: AsyncIterable[Any] | Iterable[Any],
    sink: Callable[[pa.RecordBatch], Awaitable[None]],
    *,
    options: CallerOptions | None = None,
    pool: ClientPool | None = None,
    credentials: CredentialLookup | None = None,
    total_rows: int | None = None,
    progress: ProgressCallback | None = None,
    show_sign_in: Callable[[str], None] | None = None,
) -> CallSummary:
    """Call ``tool`` once per row of ``batches`` and await ``sink`` with each result batch, in input order.

    Uses ``pool``'s session when given (its concurrency limit applies too), else opens and closes its own. Raises
    :class:`ConfigError` for a mapping that cannot work, the first failed row's error in ``fail`` mode, and
    :class:`ServerConnectError` when the server cannot be reached; input without rows gives one empty result batch
    per input batch and never connects. Cancelling the calling task cancels the calls.
    """
    options = options or CallerOptions()
    if pool is None:
        async with ClientPool(
            credentials=credentials,
            max_concurrency=options.concurrency,
            check_unsealed=not options.trust_all_servers,
            show_sign_in=show_sign_in,
            requests=ServerRequests(ServerRequestPolicy(elicitation=options.elicitation)),
        ) as own_pool:
            return await call_table(
                tool, batches, sink, options=options, pool=own_pool, total_rows=total_rows, progress=progress
            )
    source = batches if isinstance(batches, InputBatches) else InputBatches(batches)
    return await _Run(tool, options, pool, sink, progress, total_rows).run(source)


def call_table_sync(
    tool: MCPTool,
    batches: Iterable[Any],
    sink: Callable[[pa.RecordBatch], None],
    *,
    options: CallerOptions | None = None,
    credentials: CredentialLookup | None = None,
    total_rows: int | None = None,
    cancelled: Callable[[], bool] | None = None,
    progress: ProgressCallback | None = None,
    show_sign_in: Callable[[str], None] | None = None,
) -> CallSummary:
    """Blocking :func:`call_table` on one background event loop, for the KNIME node and the CLI.

    ``batches`` is read and ``sink`` called in worker threads, one at a time and in order, so the loop never waits
    on table I/O. ``cancelled`` is polled; once true the calls in flight are cancelled and
    :class:`~knime_mcp.mcp.sync.CancelledByUser` is raised. ``progress(fraction, message)`` hears of every batch.
    """
    write = partial(anyio.to_thread.run_sync, sink)
    return run_sync(
        call_table,
        tool,
        InputBatches(batches, threaded=True),
        write,
        options=options,
        credentials=credentials,
        total_rows=total_rows,
        cancelled=cancelled,
        progress=progress,
        show_sign_in=show_sign_in,
    )
