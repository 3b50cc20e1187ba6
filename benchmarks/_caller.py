"""Figures 4 and 7: the Tool Caller against a raw-SDK loop, in process and as ``knime-mcp call-table``.

Figure 4 calls :data:`_servers.FAST_STDIO`'s ``echo`` (an SDK-free server answering at once, so the client's own
work is what is timed) for 2,000 rows, 8 at a time, through :func:`call_table_sync` (what the node runs) and through
the raw SDK behind an ``anyio.CapacityLimiter``, each side starting its server and opening its session in the time.
Figure 7 runs ``knime-mcp call-table`` from a CSV file to a Parquet file, and a raw-SDK loop doing the same I/O (read
the CSV with pyarrow, call ``echo`` per row, write input and result columns to Parquet), both against the demo server
over stdio (7) and against the instant server (7c). Its memory half runs each side in a fresh process (``python
benchmarks/_caller.py CSV ROWS cli|caller|raw``), which prints its peak resident set size: ``call-table`` (7b) and the
Tool Caller's own path, ``call_table_sync`` (7d), against a raw-SDK loop streaming the same CSV blocks (``raw``)."""

from __future__ import annotations

import contextlib
import io
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import mcp
import pyarrow as pa
import pyarrow.csv
import pyarrow.parquet
from _rounds import Rounds, interleave, timed
from _servers import FAST_STDIO
from _sessions import raw_session

from knime_mcp.caller.table import CallerOptions, call_table_sync
from knime_mcp.cli.main import main as cli_main
from knime_mcp.config import ServerSpec
from knime_mcp.mcp.sync import SyncMcpClient
from knime_mcp.tools.tool import MCPTool


def _tool(spec: ServerSpec, name: str) -> MCPTool:
    with SyncMcpClient(spec) as client:
        return next(tool for tool in client.list_tools() if tool.name == name)


def caller_rounds(rows: int, concurrency: int, rounds: int) -> Rounds:
    """Seconds per round: the Tool Caller calling the instant server's ``echo`` for ``rows`` rows (batches of 100),
    against the raw SDK with as many calls in flight; each side starts the server and opens its session in its time,
    and every result is checked."""
    tool = _tool(ServerSpec(target=shlex.join(FAST_STDIO)), "echo")
    texts = [f"row {row} of the table" for row in range(rows)]
    batches = [pa.record_batch({"text": texts[start : start + 100]}) for start in range(0, rows, 100)]

    def ours() -> float:
        results: list[str] = []
        options = CallerOptions(concurrency=concurrency)
        sink = lambda batch: results.extend(batch.column("Result").to_pylist())  # noqa: E731
        seconds = timed(lambda: call_table_sync(tool, batches, sink, options=options))
        assert results == texts, results[:3]
        return seconds

    def raw() -> float:
        results: list[str] = []
        seconds = timed(lambda: results.extend(anyio.run(raw_echoes, texts, concurrency, FAST_STDIO)))
        assert results == texts, results[:3]
        return seconds

    return interleave(ours, raw, rounds)


async def raw_echoes(texts: list[str], concurrency: int, server: list[str]) -> list[str]:
    """The raw SDK's answers to ``echo`` of each text, ``concurrency`` calls in flight, on a session of its own."""
    results: list[str] = [""] * len(texts)
    limiter = anyio.CapacityLimiter(concurrency)
    async with raw_session("stdio", None, server) as call:

        async def one(row: int) -> None:
            async with limiter:
                results[row] = await call("echo", {"text": texts[row]})

        async with anyio.create_task_group() as tasks:
            for row in range(len(texts)):
                tasks.start_soon(one, row)
    return results


def write_csv(path: Path, rows: int) -> None:
    """A CSV file of ``rows`` rows (an id and a text), written a batch at a time."""
    with pyarrow.csv.CSVWriter(path, pa.schema([("id", pa.int64()), ("text", pa.string())])) as writer:
        for start in range(0, rows, 10_000):
            ids = range(start, min(start + 10_000, rows))
            writer.write_batch(pa.record_batch({"id": list(ids), "text": [f"row {i:08d} of the table" for i in ids]}))


def run_cli(source: Path, target: Path, concurrency: int, server: list[str]) -> None:
    """``knime-mcp call-table`` in this process, as its console script runs it, against the stdio ``server``."""
    argv = ["call-table", "--input", str(source), "--output", str(target), "--concurrency", str(concurrency)]
    with contextlib.redirect_stdout(io.StringIO()):
        code = cli_main([*argv, "--", *server, "--", "echo"])
    assert code == 0, code


async def raw_call_table(source: Path, target: Path, concurrency: int, server: list[str]) -> None:
    """The same I/O with the raw SDK: the CSV as text, ``echo`` per row, input and result columns to Parquet."""
    table = pyarrow.csv.read_csv(source, convert_options=pyarrow.csv.ConvertOptions(column_types={"id": pa.string()}))
    texts = table.column("text").to_pylist()
    results: list[Any] = [None] * len(texts)
    errors = [False] * len(texts)
    limiter = anyio.CapacityLimiter(concurrency)
    async with mcp.Client(mcp.StdioServerParameters(command=server[0], args=server[1:])) as client:

        async def one(row: int) -> None:
            async with limiter:
                result = await client.call_tool("echo", {"text": texts[row]})
            results[row], errors[row] = result.content[0].text, result.is_error  # type: ignore[union-attr]

        async with anyio.create_task_group() as tasks:
            for row in range(len(texts)):
                tasks.start_soon(one, row)
    output = table.append_column("Result", pa.array(results, pa.string())).append_column("Is error", pa.array(errors))
    pyarrow.parquet.write_table(output, target)


def _checked(target: Path, rows: int) -> None:
    table = pyarrow.parquet.read_table(target, columns=["text", "Result"])
    assert table.num_rows == rows and table.column("Result").equals(table.column("text")), target


def call_table_rounds(folder: Path, rows: int, concurrency: int, rounds: int, server: list[str]) -> Rounds:
    """Seconds per round of ``knime-mcp call-table`` over ``rows`` CSV rows against the raw-SDK loop, both calling
    the stdio ``server``'s ``echo``."""
    source, ours_out, raw_out = folder / "rows.csv", folder / "ours.parquet", folder / "raw.parquet"
    write_csv(source, rows)

    def ours() -> float:
        seconds = timed(lambda: run_cli(source, ours_out, concurrency, server))
        _checked(ours_out, rows)
        return seconds

    def raw() -> float:
        seconds = timed(lambda: anyio.run(raw_call_table, source, raw_out, concurrency, server))
        _checked(raw_out, rows)
        return seconds

    return interleave(ours, raw, rounds)


def peak_memory_mb(folder: Path, rows: int, path: str) -> tuple[float, float]:
    """(peak RSS in MB, seconds) of a fresh process calling the instant server's ``echo`` for ``rows`` CSV rows to
    a Parquet file, by ``path``: ``cli`` (``knime-mcp call-table``), ``caller`` (``call_table_sync`` over the input a
    batch at a time, as the Tool Caller node runs it) or ``raw`` (the raw SDK over the same batches)."""
    source = folder / f"rows_{rows}.csv"
    if not source.exists():
        write_csv(source, rows)
    command = [sys.executable, __file__, str(source), str(rows), path]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout.split()
    return float(output[0]), float(output[1])


CSV_BLOCK_BYTES = 1 << 17
"""The Tool Caller's path reads the CSV 128 KiB (about 3,800 rows) at a time, as ``call-table`` does: KNIME hands the
node batches of a size of its own, whatever the table's length. At pyarrow's default, 1 MiB (31,000 rows here),
50,000 rows are two batches and never fill the caller's window of batches in memory that 200,000 rows fill, so the
figure compared a half-empty window with a full one."""


def _csv_blocks(source: Path) -> pyarrow.csv.CSVStreamingReader:
    return pyarrow.csv.open_csv(
        source,
        read_options=pyarrow.csv.ReadOptions(block_size=CSV_BLOCK_BYTES),
        convert_options=pyarrow.csv.ConvertOptions(column_types={"id": pa.string()}),
    )


def run_caller(source: Path, target: Path, concurrency: int, server: list[str]) -> None:
    """The Tool Caller's path: the CSV read a batch at a time (as KNIME hands the node its input), every result
    batch written as it comes (as the node appends it to its output table)."""
    tool = _tool(ServerSpec(target=shlex.join(server)), "echo")
    writer: list[pyarrow.parquet.ParquetWriter] = []

    def sink(batch: pa.RecordBatch) -> None:
        if not writer:
            writer.append(pyarrow.parquet.ParquetWriter(target, batch.schema))
        writer[0].write_batch(batch)

    summary = call_table_sync(tool, iter(_csv_blocks(source)), sink, options=CallerOptions(concurrency=concurrency))
    writer[0].close()
    assert summary.errors == 0, summary


def run_raw(source: Path, target: Path, concurrency: int, server: list[str]) -> None:
    """The least a client holds for the same job: the raw SDK over the same CSV blocks, ``concurrency`` workers
    taking the block's rows in turn, each block written with its results before the next is read."""

    async def block_results(client: mcp.Client, texts: list[str]) -> tuple[list[Any], list[bool]]:
        results: list[Any] = [None] * len(texts)
        errors = [False] * len(texts)
        rows = iter(range(len(texts)))

        async def worker() -> None:
            for row in rows:
                result = await client.call_tool("echo", {"text": texts[row]})
                results[row], errors[row] = result.content[0].text, result.is_error  # type: ignore[union-attr]

        async with anyio.create_task_group() as tasks:
            for _ in range(concurrency):
                tasks.start_soon(worker)
        return results, errors

    async def streamed() -> None:
        async with mcp.Client(mcp.StdioServerParameters(command=server[0], args=server[1:])) as client:
            with pyarrow.parquet.ParquetWriter(target, _RAW_SCHEMA) as writer:
                for block in _csv_blocks(source):
                    results, errors = await block_results(client, block.column("text").to_pylist())
                    columns = [*block.columns, pa.array(results, pa.string()), pa.array(errors)]
                    writer.write_batch(pa.record_batch(columns, schema=_RAW_SCHEMA))

    anyio.run(streamed)


_RAW_SCHEMA = pa.schema([("id", pa.string()), ("text", pa.string()), ("Result", pa.string()), ("Is error", pa.bool_())])


def _peak_rss_kb() -> int:
    """This process's peak resident set. Not ``ru_maxrss``: Linux carries it over from the parent through fork and
    exec, so a child of a large benchmark process would report its parent's size."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _memory_child(source: Path, rows: int, path: str) -> None:
    target = source.with_name(f"{source.stem}_{path}.parquet")
    started = time.perf_counter()
    {"cli": run_cli, "caller": run_caller, "raw": run_raw}[path](source, target, 8, FAST_STDIO)
    seconds, peak = time.perf_counter() - started, _peak_rss_kb()
    _checked(target, rows)
    print(f"{peak / 1024:.1f} {seconds:.1f}")


if __name__ == "__main__":
    _memory_child(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
