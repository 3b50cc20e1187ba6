"""The Tool Caller engine: one call of an MCP tool for every row of a table, in row order, over one session.

Layer: above the dispatcher (argument validation, retries, the run's :class:`ClientPool`, one session per server)
and :mod:`knime_mcp.arguments` (row to arguments); below the KNIME node and the CLI, which hand in batches and take
result batches. Each output batch is its input batch (RecordBatch, Table or DataFrame) plus the result columns of
:data:`RESULT_COLUMNS`, and is handed to the sink as soon as its rows are done, in input order. A bounded window of
batches is in memory at once, however long the table; ``concurrency`` calls run at a time over the one session.

On errors: ``fail`` stops at the first failed row in row order and raises its error with the row number;
``column`` writes each row's error into the error columns and goes on. A lost or refused connection ends the run in
both modes, since every later row would fail the same way.

    summary = call_table_sync(tool, table.batches(), output.append, options=CallerOptions(concurrency=8))
    async with ClientPool() as pool:
        await call_table(tool, batches, sink, pool=pool)
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args

import anyio

from knime_mcp.arguments import ROW_ID_COLUMN, ArgumentError, ArgumentMapping, ArgumentPlan
from knime_mcp.client import ClientPool
from knime_mcp.config import CredentialLookup
from knime_mcp.dispatch import CallOutcome, Dispatcher, RetryPolicy
from knime_mcp.errors import ConfigError, McpToolError, ServerConnectError, ToolCallError
from knime_mcp.sync import ProgressCallback, run_sync
from knime_mcp.tool import MCPTool

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "RESULT_COLUMNS",
    "CallSummary",
    "CallerOptions",
    "OnError",
    "ResultKind",
    "call_table",
    "call_table_sync",
    "result_columns",
]

OnError = Literal["fail", "column"]
ResultKind = Literal["string", "binary", "boolean", "double"]

RESULT_COLUMNS: tuple[tuple[str, ResultKind], ...] = (
    ("Result", "string"),
    ("Structured result", "string"),
    ("Image", "binary"),
    ("Is error", "boolean"),
    ("Error", "string"),
    ("Duration (ms)", "double"),
)
"""The columns appended to every row: joined text content, structured content as JSON text, the first image's
bytes (PNG for most servers), whether the row failed, why, and how long the call took (retries included)."""

_BATCHES_AHEAD = 2
"""Input batches read ahead of the one being written: enough to keep every call slot busy across batch borders."""

_FAIL_HINT = "Fix the row, or set the error handling to 'error column' to record failed rows and go on."


@dataclass(frozen=True, kw_only=True)
class CallerOptions:
    """How the Tool Caller calls: one value shared by the node, the CLI and the tests.

    CallerOptions(mapping='{"text": "{comment}"}', concurrency=8, on_error="column")
    """

    mapping: ArgumentMapping = None
    """Which column feeds which parameter (see :class:`~knime_mcp.arguments.ArgumentPlan`); None: by name."""

    concurrency: int = 4
    """Calls in flight at once, all over the one session."""

    timeout: float | None = None
    """Seconds per call; None: the server's call timeout (:class:`~knime_mcp.config.Timeouts`)."""

    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """Retries after timeouts and connection errors, only for read-only or idempotent tools."""

    on_error: OnError = "fail"
    """``fail``: stop at the first failed row. ``column``: record each row's error and go on."""

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError(f"Concurrency must be at least 1, not {self.concurrency}.")
        if self.on_error not in get_args(OnError):
            raise ConfigError(f"Unknown error handling {self.on_error!r}; use one of {', '.join(get_args(OnError))}.")
        if self.timeout is not None and self.timeout <= 0:
            raise ConfigError("The call timeout must be a positive number of seconds.")


@dataclass(frozen=True)
class CallSummary:
    """What a run did: rows called (or skipped for bad arguments), rows that failed, batches written."""

    rows: int
    errors: int
    batches: int


def result_columns(input_columns: Sequence[str]) -> list[tuple[str, ResultKind]]:
    """The result columns' names and kinds, renamed ``"Name (#1)"`` where an input column already has the name."""
    taken = set(input_columns)
    columns = []
    for name, kind in RESULT_COLUMNS:
        unique, number = name, 0
        while unique in taken:
            number += 1
            unique = f"{name} (#{number})"
        taken.add(unique)
        columns.append((unique, kind))
    return columns


class _RowResult(NamedTuple):
    text: str | None
    structured: str | None
    image: bytes | None
    is_error: bool
    error: str | None
    duration_ms: float | None
    failure: McpToolError | None
    """The error to raise for this row in ``fail`` mode."""


def _from_outcome(outcome: CallOutcome, label: str) -> _RowResult:
    result, record = outcome.result, outcome.record
    if outcome.error is not None:
        failure = _at_row(outcome.error, label)
        return _RowResult(None, None, None, True, str(outcome.error), record.duration_ms, failure)
    assert result is not None
    structured = None if result.structured is None else json.dumps(result.structured, ensure_ascii=False)
    images = result.images
    image = images[0].bytes if images else None
    if not result.is_error:
        return _RowResult(result.text, structured, image, False, None, record.duration_ms, None)
    failure = ToolCallError(
        f"Row {label}: tool {record.tool!r} reported an error: {result.text}", server=record.server, hint=_FAIL_HINT
    )
    return _RowResult(result.text, structured, image, True, result.text, record.duration_ms, failure)


def _at_row(error: McpToolError, label: str) -> McpToolError:
    """The same kind of error, with the row in its message so the workflow builder can find it."""
    return type(error)(f"Row {label}: {error.message}", server=error.server, hint=error.hint or _FAIL_HINT)


def _invalid_row(error: ArgumentError, label: str) -> _RowResult:
    failure = ToolCallError(f"Row {label}: {error}", hint=_FAIL_HINT)
    return _RowResult(None, None, None, True, str(error), None, failure)


class _Batch:
    """One input batch on its way through: its arguments, and each row's result once its call is done."""

    def __init__(self, data: pa.RecordBatch, first_row: int, plan: ArgumentPlan) -> None:
        self.data = data
        self.first_row = first_row
        self.size = data.num_rows
        cells = {column: data.column(column).to_pylist() for column in plan.columns}
        self.arguments: list[dict[str, Any] | ArgumentError] = []
        for row in range(self.size):
            try:
                self.arguments.append(plan.build(cells, row))
            except ArgumentError as exc:
                self.arguments.append(exc)
        self.results: list[_RowResult | None] = [None] * self.size
        self.unfinished = self.size
        self.watched = False
        """Whether the writer must hear of every finished row: set once the first failure lies in this batch."""
        self.changed = anyio.Event()

    def label(self, row: int) -> str:
        """The row's number in the table, and its KNIME RowID when the batch has one."""
        number = f"{self.first_row + row + 1}"
        if ROW_ID_COLUMN not in self.data.schema.names:
            return number
        return f"{number} (RowID {self.data.column(ROW_ID_COLUMN)[row].as_py()})"

    def finish(self, row: int, result: _RowResult) -> None:
        self.results[row] = result
        self.unfinished -= 1
        if self.unfinished == 0 or self.watched:
            self.changed.set()

    def settled(self, stop: int | None) -> bool:
        """All rows done, or in ``fail`` mode all rows up to the first failure."""
        if self.unfinished == 0:
            return True
        if stop is None or not self.first_row <= stop < self.first_row + self.size:
            return False
        return all(result is not None for result in self.results[: stop - self.first_row + 1])

    def first_failure(self) -> McpToolError | None:
        return next((r.failure for r in self.results if r is not None and r.failure is not None), None)

    def output(self, names: Sequence[str]) -> pa.RecordBatch:
        import pyarrow as pa

        results: list[_RowResult] = self.results  # type: ignore[assignment]  (settled: every row is done)
        arrays = [
            pa.array([r.text for r in results], pa.string()),
            pa.array([r.structured for r in results], pa.string()),
            pa.array([r.image for r in results], pa.large_binary()),
            pa.array([r.is_error for r in results], pa.bool_()),
            pa.array([r.error for r in results], pa.string()),
            pa.array([r.duration_ms for r in results], pa.float64()),
        ]
        schema = self.data.schema
        for name, array in zip(names, arrays):
            schema = schema.append(pa.field(name, array.type))
        return pa.RecordBatch.from_arrays([*self.data.columns, *arrays], schema=schema)


def _record_batch(data: Any) -> pa.RecordBatch:
    """One RecordBatch per input batch, so output batches keep the input's sizes (KNIME requires equal sizes)."""
    import pyarrow as pa

    if isinstance(data, pa.RecordBatch):
        return data
    if isinstance(data, pa.Table):
        batches = data.combine_chunks().to_batches()
        return batches[0] if batches else pa.RecordBatch.from_pylist([], schema=data.schema)
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return pa.RecordBatch.from_pandas(data, preserve_index=False)
    raise TypeError(f"Input batches must be pyarrow RecordBatches or Tables or pandas DataFrames, not {type(data)}")


class _Run:
    """The state one :func:`call_table` run shares between its reader, its callers and its writer."""

    def __init__(
        self,
        tool: MCPTool,
        options: CallerOptions,
        dispatcher: Dispatcher,
        sink: Callable[[pa.RecordBatch], Awaitable[None]],
        progress: ProgressCallback | None,
        total_rows: int | None,
    ) -> None:
        self.tool, self.options, self.dispatcher = tool, options, dispatcher
        self.sink, self.progress, self.total_rows = sink, progress, total_rows
        self.stop: int | None = None
        """``fail`` mode: the first failed row seen so far; no row after it is dispatched."""
        self.plan: ArgumentPlan | None = None
        self.names: list[str] = []
        self.rows = self.errors = self.batches = 0

    async def run(self, batches: AsyncIterator[Any]) -> CallSummary:
        jobs_send, jobs = anyio.create_memory_object_stream[_Batch](_BATCHES_AHEAD)
        rows_send, rows = anyio.create_memory_object_stream[tuple[_Batch, int]]()
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._read, batches, jobs_send, rows_send)
                with rows:
                    for _ in range(self.options.concurrency):
                        tasks.start_soon(self._call, rows.clone())
                await self._write(jobs)
        except BaseExceptionGroup as group:
            raise _sole(group) from None
        return CallSummary(self.rows, self.errors, self.batches)

    def _prepare(self, data: pa.RecordBatch, first_row: int) -> _Batch:
        if self.plan is None:
            self.plan = ArgumentPlan(self.tool, data.schema.names, self.options.mapping)
            self.names = [name for name, _ in result_columns(data.schema.names)]
        return _Batch(data, first_row, self.plan)

    async def _read(self, batches: AsyncIterator[Any], jobs: Any, rows: Any) -> None:
        async with jobs, rows:
            first_row = 0
            async for data in batches:
                job = self._prepare(_record_batch(data), first_row)
                await jobs.send(job)
                for row, arguments in enumerate(job.arguments):
                    if self.stop is not None:
                        return
                    if isinstance(arguments, ArgumentError):
                        self._finish(job, row, _invalid_row(arguments, job.label(row)))
                    else:
                        await rows.send((job, row))
                first_row += job.size

    async def _call(self, rows: Any) -> None:
        async with rows:
            async for job, row in rows:
                outcome = await self.dispatcher.call(self.tool, job.arguments[row])
                if isinstance(outcome.error, ServerConnectError):
                    raise outcome.error
                self._finish(job, row, _from_outcome(outcome, job.label(row)))

    def _finish(self, job: _Batch, row: int, result: _RowResult) -> None:
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

    def _report(self) -> None:
        if self.progress is None:
            return
        if self.total_rows:
            self.progress(min(self.rows / self.total_rows, 1.0), f"{self.rows:,} of {self.total_rows:,} rows called")
        else:
            self.progress(0.0, f"{self.rows:,} rows called")


def _sole(group: BaseExceptionGroup) -> BaseException:
    """The one error that ended the run (the other tasks were cancelled by it), else the whole group."""
    errors = list(_leaves(group))
    return errors[0] if len(errors) == 1 else group


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


class _Batches:
    """Input batches as an async iterator; a plain iterable is read in a worker thread when ``threaded``, so
    slow table I/O never stalls the calls in flight. A class rather than an async generator: leaving it early
    needs no finalisation."""

    def __init__(self, batches: AsyncIterable[Any] | Iterable[Any], *, threaded: bool = False) -> None:
        self._async = aiter(batches) if isinstance(batches, AsyncIterable) else None
        self._sync: Iterator[Any] = iter(()) if self._async is not None else iter(batches)  # type: ignore[arg-type]
        self._threaded = threaded

    def __aiter__(self) -> _Batches:
        return self

    async def __anext__(self) -> Any:
        if self._async is not None:
            return await anext(self._async)
        if self._threaded:
            batch = await anyio.to_thread.run_sync(next, self._sync, _END)
        else:
            batch = next(self._sync, _END)
        if batch is _END:
            raise StopAsyncIteration
        return batch


_END = object()


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
) -> CallSummary:
    """Call ``tool`` once per row of ``batches`` and await ``sink`` with each result batch, in input order.

    Uses ``pool``'s session when given (its concurrency limit applies too), else opens and closes its own. Raises
    :class:`ConfigError` for a mapping that cannot work, the first failed row's error in ``fail`` mode, and
    :class:`ServerConnectError` when the server cannot be reached. Cancelling the calling task cancels the calls.
    """
    options = options or CallerOptions()
    if pool is None:
        async with ClientPool(credentials=credentials, max_concurrency=options.concurrency) as own_pool:
            return await call_table(
                tool, batches, sink, options=options, pool=own_pool, total_rows=total_rows, progress=progress
            )
    await pool.client(tool.server)  # connect before the first row, so no row's duration includes the handshake
    dispatcher = Dispatcher(pool, timeout=options.timeout, retry=options.retry)
    source = batches if isinstance(batches, _Batches) else _Batches(batches)
    return await _Run(tool, options, dispatcher, sink, progress, total_rows).run(source)


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
) -> CallSummary:
    """Blocking :func:`call_table` on one background event loop, for the KNIME node and the CLI.

    ``batches`` is read and ``sink`` called in worker threads, one at a time and in order, so the loop never waits
    on table I/O. ``cancelled`` is polled; once true the calls in flight are cancelled and
    :class:`~knime_mcp.sync.CancelledByUser` is raised. ``progress(fraction, message)`` hears of every batch.
    """
    write = partial(anyio.to_thread.run_sync, sink)
    return run_sync(
        call_table,
        tool,
        _Batches(batches, threaded=True),
        write,
        options=options,
        credentials=credentials,
        total_rows=total_rows,
        cancelled=cancelled,
        progress=progress,
    )
