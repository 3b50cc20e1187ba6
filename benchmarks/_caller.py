"""Figures 4 and 7: the Tool Caller's concurrency speed-up, and its peak memory as the table grows.

The memory figure runs each size in a fresh process (``python benchmarks/_caller.py ROWS``) that streams generated
batches through :func:`call_table_sync` and prints its peak resident set size; the rows never exist all at once,
and the output batches are dropped as they arrive, as a KNIME ``BatchOutputTable`` hands them on.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
from _servers import FAST_STDIO

from knime_mcp.caller import CallerOptions, call_table_sync
from knime_mcp.config import ServerSpec
from knime_mcp.sync import SyncMcpClient
from knime_mcp.tool import MCPTool

MEMORY_BATCH_ROWS = 1000
MEMORY_CONCURRENCY = 8


def _tool(spec: ServerSpec, name: str) -> MCPTool:
    with SyncMcpClient(spec) as client:
        return next(tool for tool in client.list_tools() if tool.name == name)


def caller_seconds(url: str, rows: int, seconds: float, concurrency: int) -> float:
    """Wall seconds for the Tool Caller to call ``sleep(seconds)`` for ``rows`` rows (batches of 100)."""
    tool = _tool(ServerSpec(target=url), "sleep")
    batches = [pa.record_batch({"seconds": [seconds] * 100}) for _ in range(rows // 100)]
    started = time.perf_counter()
    call_table_sync(tool, batches, lambda batch: None, options=CallerOptions(concurrency=concurrency))
    return time.perf_counter() - started


def peak_memory_mb(rows: int) -> tuple[float, float]:
    """(peak RSS in MB, seconds) of a fresh process calling ``echo`` for ``rows`` generated rows."""
    command = [sys.executable, __file__, str(rows)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout.split()
    return float(output[0]), float(output[1])


def _generated(rows: int) -> Iterator[pa.RecordBatch]:
    for start in range(0, rows, MEMORY_BATCH_ROWS):
        stop = min(start + MEMORY_BATCH_ROWS, rows)
        texts = [f"row {i:08d} of the table" for i in range(start, stop)]
        yield pa.record_batch({"id": pa.array(range(start, stop), pa.int64()), "text": texts})


def _peak_rss_kb() -> int:
    """This process's peak resident set. Not ``ru_maxrss``: Linux carries it over from the parent through fork and
    exec, so a child of a large benchmark process would report its parent's size."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _memory_child(rows: int) -> None:
    tool = _tool(ServerSpec(target=" ".join(FAST_STDIO)), "echo")
    options = CallerOptions(concurrency=MEMORY_CONCURRENCY)
    started = time.perf_counter()
    summary = call_table_sync(tool, _generated(rows), lambda batch: None, options=options)
    assert summary.rows == rows and summary.errors == 0, summary
    print(f"{_peak_rss_kb() / 1024:.1f} {time.perf_counter() - started:.1f}")


if __name__ == "__main__":
    _memory_child(int(sys.argv[1]))
