"""The command line's ``call-table`` command: one call of a tool for every row of a CSV or Parquet file, streamed
to a Parquet file a batch at a time.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any, TextIO

from knime_mcp.cli.policy_options import granted_permissions
from knime_mcp.cli.servers import SignInPrompt
from knime_mcp.cli.tool_sources import ToolSource
from knime_mcp.cli.tool_stats_output import add_stats_option, write_stats
from knime_mcp.errors import UsageError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["add_call_table_options", "run_call_table"]


def add_call_table_options(table: argparse.ArgumentParser) -> None:
    """``call-table``'s options for its calls and its report: retries, error handling, ``--stats``."""
    table.add_argument("--retries", type=int, default=2, help="retries for read-only or idempotent tools")
    table.add_argument("--on-error", choices=["fail", "column"], default="fail", help="stop, or record and go on")
    add_stats_option(table, "after the rows are called")


def _check_output(path: str) -> None:
    """``call-table --output``: a Parquet file in an existing folder, checked before the first call."""
    if os.path.splitext(path)[1].lower() != ".parquet":
        raise UsageError(f"--output must be a .parquet file, not {path!r}.")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"The folder of --output {path!r} does not exist.", hint=f"Create it first: mkdir -p {folder}")


_CSV_BLOCK_BYTES = 1 << 17
"""``call-table`` reads CSV 128 KiB at a time (pyarrow's default, 1 MiB, made batches of tens of thousands of rows),
so results are written and progress shown every few thousand rows, and memory holds a few batches however long the
file."""
_PARQUET_BATCH_ROWS = 4096
"""The same for Parquet input (pyarrow's default: 65,536 rows)."""


def _open_csv_as_text(path: str) -> Any:
    """A CSV file's batches with every column as text, so each value reaches its parameter as written (``007``
    stays ``007`` for a string) and is converted by the parameter's JSON type alone. An empty cell is missing, and
    leaves its parameter out; a quoted empty cell (``""``) is the empty string."""
    import pyarrow as pa
    import pyarrow.csv

    names = pyarrow.csv.open_csv(path).schema.names
    return pyarrow.csv.open_csv(
        path,
        read_options=pyarrow.csv.ReadOptions(block_size=_CSV_BLOCK_BYTES),
        convert_options=pyarrow.csv.ConvertOptions(
            column_types={name: pa.string() for name in names},
            strings_can_be_null=True,
            null_values=[""],
            quoted_strings_can_be_null=False,
        ),
    )


def run_call_table(args: argparse.Namespace, source: ToolSource, out: TextIO, err: TextIO, show: SignInPrompt) -> int:
    """Batches stream from the input file to a Parquet file beside the output, renamed only on success; on a
    terminal, ``err`` shows a progress bar. The tool is an MCP server's, or an HTTP or MCP tool of a tools file or an
    OpenAPI document (``source``)."""
    _check_output(args.output)

    import pyarrow.csv
    import pyarrow.parquet

    from knime_mcp.caller.batches import RESULT_COLUMNS
    from knime_mcp.caller.table import DEFAULT_CONCURRENCY, CallerOptions, CallSummary, call_table
    from knime_mcp.calls.dispatch import RetryPolicy
    from knime_mcp.cli.progress_bar import progress_bar
    from knime_mcp.mcp.sync import run_sync

    if args.retries < 0:
        raise UsageError("--retries must be 0 or more.")
    granted = granted_permissions(args, source.spec)
    options = CallerOptions(
        mapping=args.mapping,
        # An explicit --concurrency is the user's choice for this tool, whatever its annotations.
        concurrency=DEFAULT_CONCURRENCY if args.concurrency is None else args.concurrency,
        concurrent_writes=args.concurrency is not None,
        retry=RetryPolicy(attempts=args.retries + 1),
        on_error=args.on_error,
        elicitation=args.elicitation,
        tasks=args.tasks,
        granted=granted,
    )
    suffix = os.path.splitext(args.input)[1].lower()
    if suffix not in (".csv", ".parquet"):
        raise UsageError(f"--input must be a .csv or .parquet file, not {args.input!r}.")
    try:
        if suffix == ".csv":
            reader, total = _open_csv_as_text(args.input), None
        else:
            parquet = pyarrow.parquet.ParquetFile(args.input)
            reader, total = parquet.iter_batches(batch_size=_PARQUET_BATCH_ROWS), parquet.metadata.num_rows
    except (OSError, pyarrow.ArrowInvalid) as exc:
        raise UsageError(f"Cannot read {args.input}: {exc}") from exc
    partial_path = f"{args.output}.partial"
    writers: list[pyarrow.parquet.ParquetWriter] = []
    bar = progress_bar(err, total)
    # The result columns come last; "Is error" may be renamed after an input column, so it is found by position.
    is_error = [name for name, _ in RESULT_COLUMNS].index("Is error") - len(RESULT_COLUMNS)
    calls: list[pyarrow.Table] = []  # with --stats: each batch's calls, as the Tool Statistics node reads them

    async def write(batch: pyarrow.RecordBatch) -> None:
        if not writers:
            writers.append(pyarrow.parquet.ParquetWriter(partial_path, batch.schema))
        writers[0].write_batch(batch)
        if args.stats:
            calls.append(_calls(batch, args.tool))
        if bar is not None:
            bar.advance(rows=batch.num_rows, errors=batch.column(batch.num_columns + is_error).true_count)

    async def call_file() -> CallSummary:
        async with source.pool(show, max_concurrency=options.concurrency) as pool:
            tool = await source.tool(pool)
            return await call_table(tool, reader, write, options=options, pool=pool, total_rows=total)

    try:
        try:
            summary = run_sync(call_file)
        finally:
            if bar is not None:
                bar.close()
            for writer in writers:
                writer.close()
    except BaseException:
        if writers:
            os.remove(partial_path)
        raise
    if not writers:
        raise UsageError(f"{args.input} has no rows.")
    os.replace(partial_path, args.output)
    failed = f", {summary.errors:,} failed (see the Error column)" if summary.errors else ""
    out.write(f"{summary.rows:,} rows called{failed}; wrote {args.output}\n")
    if args.stats:
        write_stats(pyarrow.concat_tables(calls), out)
    return 0


def _calls(batch: pa.RecordBatch, tool: str) -> pa.Table:
    """A batch's calls of ``tool``: its *Is error* and *Duration (ms)* and the size of its *Result*, found by
    position (an input column of the same name renames them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from knime_mcp.caller.batches import RESULT_COLUMNS

    names = [name for name, _ in RESULT_COLUMNS]
    column = {name: batch.column(batch.num_columns + names.index(name) - len(names)) for name in names}
    return pa.table(
        {
            "Tool": pa.array([tool] * batch.num_rows, pa.string()),
            "Is error": column["Is error"],
            "Duration (ms)": column["Duration (ms)"],
            "Result Size": pc.utf8_length(column["Result"]),
        }
    )
