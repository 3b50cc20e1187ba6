"""Figures 1, 3 and 8: the project's client (async, and the sync facade) against the raw ``mcp`` SDK (``mcp.Client``
and its transports).

Both sides call the demo server's tools over the same transport at their default settings; each side keeps one
session for its timed calls, and every answer is checked.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import anyio.to_thread
import mcp
from _rounds import Rounds, interleave_async, same_gc_state
from _servers import DEMO_STDIO
from mcp.client.sse import sse_client

from knime_mcp.config import ServerSpec
from knime_mcp.mcp.client import McpClient
from knime_mcp.mcp.sync import SyncMcpClient

Call = Callable[[str, dict[str, Any]], Awaitable[str]]
"""One tool call on an open session, answering the call's text: ``await call(tool_name, arguments)``."""

SLEPT = "Slept 0.05 s."


def raw_server(transport: str, url: str | None, command: list[str] = DEMO_STDIO) -> Any:
    """What ``mcp.Client`` takes for each transport (stdio: the server ``command``)."""
    if transport == "stdio":
        return mcp.StdioServerParameters(command=command[0], args=command[1:])
    if transport == "sse":
        return sse_client(url or "")
    return url


def our_spec(transport: str, url: str | None, command: list[str] = DEMO_STDIO) -> ServerSpec:
    target = " ".join(command) if transport == "stdio" else url or ""
    return ServerSpec(target=target, transport=transport)  # type: ignore[arg-type]


@asynccontextmanager
async def raw_session(transport: str, url: str | None, command: list[str] = DEMO_STDIO) -> AsyncIterator[Call]:
    async with mcp.Client(raw_server(transport, url, command)) as client:

        async def call(name: str, arguments: dict[str, Any]) -> str:
            return (await client.call_tool(name, arguments)).content[0].text  # type: ignore[union-attr]

        yield call


@asynccontextmanager
async def our_session(transport: str, url: str | None, command: list[str] = DEMO_STDIO) -> AsyncIterator[Call]:
    async with McpClient(our_spec(transport, url, command)) as client:

        async def call(name: str, arguments: dict[str, Any]) -> str:
            return (await client.call_tool(name, arguments)).text

        yield call


async def sequential(call: Call, count: int) -> float:
    """Seconds for ``count`` echo calls, one after the other; each answer is checked."""
    started = time.perf_counter()
    for number in range(count):
        text = f"call {number}"
        answer = await call("echo", {"text": text})
        assert answer == text, (answer, text)
    return time.perf_counter() - started


async def concurrent(call: Call, count: int, limit: int | None = None) -> float:
    """Wall seconds for ``count`` calls of ``sleep(0.05)``, all started at once (at most ``limit`` in flight, as a
    plain ``anyio.CapacityLimiter`` lets them); each answer is checked.

    Timed from :func:`_rounds.same_gc_state`: hundreds of calls in flight outlive young collections and soon bring
    about a full one, which takes 30-40 ms in this process."""
    answers: list[str] = []
    limiter = anyio.CapacityLimiter(limit or count)

    async def one() -> None:
        async with limiter:
            answers.append(await call("sleep", {"seconds": 0.05}))

    with same_gc_state():
        started = time.perf_counter()
        async with anyio.create_task_group() as tasks:
            for _ in range(count):
                tasks.start_soon(one)
        seconds = time.perf_counter() - started
    assert answers == [SLEPT] * count, answers[:3]
    return seconds


async def compare_sequential(transport: str, url: str | None, calls: int, rounds: int) -> Rounds:
    """Seconds per round of ``calls`` sequential calls: ours and the raw SDK, one session each."""
    async with our_session(transport, url) as ours, raw_session(transport, url) as raw:
        await sequential(ours, 20)
        await sequential(raw, 20)
        return await interleave_async(partial(sequential, ours, calls), partial(sequential, raw, calls), rounds)


async def compare_concurrent(transport: str, url: str | None, calls: int, rounds: int) -> Rounds:
    """Wall seconds of ``calls`` concurrent sleeps on one session each, both sides at their default settings: the
    project's client with its default limit (:data:`~knime_mcp.mcp.client.DEFAULT_MAX_CONCURRENCY`), the raw SDK with
    all of them in flight at once."""
    async with our_session(transport, url) as ours, raw_session(transport, url) as raw:
        await concurrent(ours, 10)
        await concurrent(raw, 10)
        return await interleave_async(partial(concurrent, ours, calls), partial(concurrent, raw, calls), rounds)


async def compare_sync(transport: str, url: str | None, calls: int, rounds: int) -> Rounds:
    """Seconds per round of ``calls`` sequential calls: :class:`SyncMcpClient` from a plain thread, against the raw
    SDK on its own event loop; one session each, open throughout."""
    with SyncMcpClient(our_spec(transport, url)) as client:

        def blocking() -> float:
            started = time.perf_counter()
            for number in range(calls):
                answer = client.call_tool("echo", {"text": f"call {number}"}).text
                assert answer == f"call {number}", answer
            return time.perf_counter() - started

        async with raw_session(transport, url) as raw:
            await sequential(raw, 20)
            await anyio.to_thread.run_sync(blocking)
            return await interleave_async(
                partial(anyio.to_thread.run_sync, blocking), partial(sequential, raw, calls), rounds
            )
