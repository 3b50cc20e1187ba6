"""Figures 1-3: the project's client against the raw ``mcp`` SDK (``mcp.Client`` and its transports).

Both sides call the demo server's tools over the same transport; each side keeps one session for its timed calls.
The naive pattern opens a new ``mcp.Client`` for every call, as integrations without session reuse do.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import mcp
from _servers import DEMO_STDIO
from mcp.client.sse import sse_client

from knime_mcp.client import McpClient
from knime_mcp.config import ServerSpec

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""One tool call on an open session: ``await call(tool_name, arguments)``."""


def raw_server(transport: str, url: str | None) -> Any:
    """What ``mcp.Client`` takes for each transport."""
    if transport == "stdio":
        return mcp.StdioServerParameters(command=DEMO_STDIO[0], args=DEMO_STDIO[1:])
    if transport == "sse":
        return sse_client(url or "")
    return url


@asynccontextmanager
async def raw_session(transport: str, url: str | None) -> AsyncIterator[Call]:
    async with mcp.Client(raw_server(transport, url)) as client:
        yield client.call_tool


@asynccontextmanager
async def our_session(transport: str, url: str | None, max_concurrency: int = 8) -> AsyncIterator[Call]:
    target = " ".join(DEMO_STDIO) if transport == "stdio" else url or ""
    spec = ServerSpec(target=target, transport=transport)  # type: ignore[arg-type]
    async with McpClient(spec, max_concurrency=max_concurrency) as client:
        yield client.call_tool


async def sequential(call: Call, count: int) -> float:
    """Seconds for ``count`` echo calls, one after the other."""
    started = time.perf_counter()
    for number in range(count):
        await call("echo", {"text": f"call {number}"})
    return time.perf_counter() - started


async def concurrent(call: Call, count: int, seconds: float) -> float:
    """Wall seconds for ``count`` calls of ``sleep(seconds)``, all in flight at once."""
    started = time.perf_counter()
    async with anyio.create_task_group() as tasks:
        for _ in range(count):
            tasks.start_soon(call, "sleep", {"seconds": seconds})
    return time.perf_counter() - started


@dataclass(frozen=True)
class Paired:
    """Interleaved rounds of ours and the baseline: medians of each, and the median of the per-round ratios. Rounds
    measured back to back share the machine's load, so the median ratio is steady even on a busy machine."""

    ours: float
    raw: float
    ratio: float


async def paired(ours: Callable[[], Awaitable[float]], raw: Callable[[], Awaitable[float]], rounds: int) -> Paired:
    our_times, raw_times = [], []
    for number in range(rounds):
        first, second = (ours, raw) if number % 2 == 0 else (raw, ours)
        a, b = await first(), await second()
        our_times.append(a if first is ours else b)
        raw_times.append(b if first is ours else a)
    ratios = [mine / theirs for mine, theirs in zip(our_times, raw_times, strict=True)]
    return Paired(statistics.median(our_times), statistics.median(raw_times), statistics.median(ratios))


async def compare_sequential(transport: str, url: str | None, calls: int, rounds: int) -> Paired:
    """Seconds per call, ours and raw, for rounds of ``calls`` sequential calls on one session each."""
    async with our_session(transport, url) as ours, raw_session(transport, url) as raw:
        await sequential(ours, 20)
        await sequential(raw, 20)
        result = await paired(partial(sequential, ours, calls), partial(sequential, raw, calls), rounds)
    return Paired(result.ours / calls, result.raw / calls, result.ratio)


async def naive_per_call(transport: str, url: str | None, calls: int) -> float:
    """Seconds per call when every call opens its own session (and, over stdio, its own server process)."""
    started = time.perf_counter()
    for number in range(calls):
        async with mcp.Client(raw_server(transport, url)) as client:
            await client.call_tool("echo", {"text": f"call {number}"})
    return (time.perf_counter() - started) / calls


async def compare_concurrent(transport: str, url: str | None, calls: int, seconds: float, rounds: int) -> Paired:
    """Wall seconds, ours and raw, for ``calls`` concurrent sleeps on one session each."""
    async with our_session(transport, url, max_concurrency=calls) as ours, raw_session(transport, url) as raw:
        await concurrent(ours, 10, 0.0)
        await concurrent(raw, 10, 0.0)
        return await paired(partial(concurrent, ours, calls, seconds), partial(concurrent, raw, calls, seconds), rounds)
