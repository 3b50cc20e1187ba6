"""The Tool Caller issue's seven benchmark figures, each a ratio against a baseline measured in the same run.

    python benchmarks/run.py

Starts the demo server over Streamable HTTP and SSE on 127.0.0.1 (stdio servers are started by the clients), prints
each figure as it is measured, and ends with a Markdown table (machine and date included) for the README. Takes
about four minutes on two cores; exits 1 when a bar is missed. Figures 1, 3 and 6 alternate rounds of ours and the
baseline and report medians and the median of the per-round ratios, so load from other processes hurts both sides
alike; the other figures' margins are wide.

1. 300 sequential calls, project client vs raw SDK, one session each, per transport: at most 1.10x.
2. The same calls vs a new raw-SDK session per call (fewer calls, reported per call): at least 10x over HTTP and SSE,
   100x over stdio.
3. 200 concurrent calls of a 50 ms tool on one session, project client vs raw SDK, wall time: at most 1.10x.
4. Tool Caller, 400 rows of a 50 ms tool, concurrency 1 vs 8: at least 6x.
5. 5,000 tools to the Arrow table and back vs ``json.loads`` of the same tools: at most 3x.
6. Cold start of ``knime-mcp tools URL`` vs a minimal raw-SDK script, fresh processes: at most 1.3x.
7. Tool Caller peak memory (RSS) at 50,000 and 200,000 rows, each in a fresh process: flat (at most 1.10x).
"""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
from _caller import caller_seconds, peak_memory_mb
from _servers import demo_server
from _sessions import compare_concurrent, compare_sequential, naive_per_call
from _startup import arrow_against_json, cold_starts

TRANSPORTS = ("stdio", "streamable-http", "sse")
SEQUENTIAL_CALLS = 300
NAIVE_CALLS = {"stdio": 3, "streamable-http": 30, "sse": 30}
"""Connecting anew per call is slow (a server process per call over stdio), so fewer calls, reported per call."""
NAIVE_BAR = {"stdio": 100.0, "streamable-http": 10.0, "sse": 10.0}
SEQUENTIAL_ROUNDS = 11
CONCURRENT_ROUNDS = 9
COLD_STARTS = 7
ARROW_ROUNDS = 5


@dataclass(frozen=True)
class Figure:
    number: int
    what: str
    measured: str
    ratio: float
    bar: str
    met: bool

    def line(self) -> str:
        verdict = "met" if self.met else "MISSED"
        return f"{self.number}. {self.what}: {self.measured} -> {self.ratio:.2f}x ({self.bar}: {verdict})"

    def row(self) -> str:
        bar = self.bar if self.met else f"{self.bar} (missed)"
        return f"| {self.number} | {self.what} | {self.measured} | {self.ratio:.2f}x | {bar} |"


def _at_most(limit: float, number: int, what: str, measured: str, ratio: float) -> Figure:
    return Figure(number, what, measured, ratio, f"at most {limit:g}x", ratio <= limit)


def _at_least(limit: float, number: int, what: str, measured: str, ratio: float) -> Figure:
    return Figure(number, what, measured, ratio, f"at least {limit:g}x", ratio >= limit)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def session_figures(urls: dict[str, str | None]) -> Iterator[Figure]:
    """Figures 1 and 2 per transport, then figure 3 per transport."""
    for transport in TRANSPORTS:
        url = urls[transport]
        calls = anyio.run(compare_sequential, transport, url, SEQUENTIAL_CALLS, SEQUENTIAL_ROUNDS)
        measured = f"ours {_ms(calls.ours)}/call, raw SDK {_ms(calls.raw)}/call"
        yield _at_most(1.10, 1, f"{SEQUENTIAL_CALLS} sequential calls, {transport}", measured, calls.ratio)
        naive = anyio.run(naive_per_call, transport, url, NAIVE_CALLS[transport])
        count = NAIVE_CALLS[transport]
        measured = f"new session per call {_ms(naive)}/call ({count} calls), ours {_ms(calls.ours)}/call"
        yield _at_least(NAIVE_BAR[transport], 2, f"session reuse speed-up, {transport}", measured, naive / calls.ours)
    for transport in TRANSPORTS:
        wall = anyio.run(compare_concurrent, transport, urls[transport], 200, 0.05, CONCURRENT_ROUNDS)
        measured = f"ours {wall.ours:.3f} s, raw SDK {wall.raw:.3f} s"
        yield _at_most(1.10, 3, f"200 concurrent 50 ms calls, {transport}", measured, wall.ratio)


def caller_speedup(url: str) -> Figure:
    one, eight = caller_seconds(url, 400, 0.05, 1), caller_seconds(url, 400, 0.05, 8)
    measured = f"concurrency 1 {one:.2f} s, concurrency 8 {eight:.2f} s"
    return _at_least(6, 4, "Tool Caller, 400 rows of a 50 ms tool", measured, one / eight)


def arrow_figure() -> Figure:
    arrow, plain = arrow_against_json(5000, ARROW_ROUNDS)
    measured = f"to Arrow and back {_ms(arrow)}, json.loads {_ms(plain)}"
    return _at_most(3, 5, "5,000 tools as an Arrow table", measured, arrow / plain)


def cold_start_figure(url: str) -> Figure:
    with tempfile.TemporaryDirectory() as folder:
        ours, raw, ratio = cold_starts(url, COLD_STARTS, Path(folder))
    measured = f"ours {ours:.2f} s, raw SDK script {raw:.2f} s (medians of {COLD_STARTS})"
    return _at_most(1.3, 6, "cold start of `knime-mcp tools URL`", measured, ratio)


def memory_figure() -> Figure:
    (small, small_s), (large, large_s) = peak_memory_mb(50_000), peak_memory_mb(200_000)
    measured = f"50,000 rows {small:.0f} MB ({small_s:.0f} s), 200,000 rows {large:.0f} MB ({large_s:.0f} s)"
    return _at_most(1.10, 7, "Tool Caller peak memory (RSS)", measured, large / small)


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    info = Path("/proc/cpuinfo")
    if info.exists():
        names = [line.split(":", 1)[1].strip() for line in info.read_text().splitlines() if "model name" in line]
        cpu = names[0] if names else cpu
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"{cpu}, {cores} cores, {platform.system()} {platform.release()}, Python {platform.python_version()}, "
        f"mcp {importlib.metadata.version('mcp')}"
    )


def _figures() -> Iterator[Figure]:
    with demo_server("streamable-http") as http_url, demo_server("sse") as sse_url:
        yield from session_figures({"stdio": None, "streamable-http": http_url, "sse": sse_url})
        yield caller_speedup(http_url)
        yield arrow_figure()
        yield cold_start_figure(http_url)
    yield memory_figure()


def main() -> int:
    started = datetime.datetime.now(datetime.UTC)
    machine = _machine()
    print(f"knime-mcp benchmarks, {started:%Y-%m-%d %H:%M} UTC\nmachine: {machine}\n", flush=True)
    figures = []
    for figure in _figures():
        print(figure.line(), flush=True)
        figures.append(figure)
    seconds = (datetime.datetime.now(datetime.UTC) - started).total_seconds()
    print(f"\nResults of {started:%Y-%m-%d} on {machine} ({seconds:.0f} s):\n")
    print("| # | figure | measured | ratio | bar |\n|---|---|---|---|---|")
    print("\n".join(figure.row() for figure in figures))
    return 0 if all(figure.met for figure in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
