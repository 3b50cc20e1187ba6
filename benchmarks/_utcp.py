"""Figure 15: a UTCP manual's tool through knime-mcp against utcp's own client, calling and listing.

Both sides use one provider built with utcp's own ``@utcp_tool`` (``utcp_provider.py``, FastAPI on 127.0.0.1: one
``echo`` tool whose manual asks for an API key in a header). Ours is what the HTTP Tool Provider and the Tool Caller
do: :func:`~knime_mcp.calls.listing.list_http_tools` on the manual's URL with the person's key (``${VAR}``), then
each call through :class:`~knime_mcp.calls.dispatch.Dispatcher` on a :class:`~knime_mcp.calls.pool.ClientPool`
checking unsealed rows. The peer is utcp 1.2.0 with utcp-http: ``UtcpClient.create`` with the key as a variable,
``register_manual`` of the manual's URL, then ``call_tool``. Calls: sequential (15) and a burst at once (15b,
reported, not judged: its rounds scatter from 0.6x to 4.6x), each side keeping its client; listing (15c): reading
the manual into tools, against ``UtcpClient.create`` plus ``register_manual``. Every answer and listing is checked.

utcp calls ``logging.basicConfig(level=INFO)`` when imported and when its plugins load: both happen here at import,
with the root logger holding a handler (so the calls do nothing), which is then put back as it was: neither side
pays for log lines the other does not write.
"""

from __future__ import annotations

import logging
import os
import secrets
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio
from _rounds import Call, Rounds, calls_at_once, calls_in_a_row, interleave_async, same_gc_state
from _servers import served

from knime_mcp.calls import listing
from knime_mcp.calls.dispatch import Dispatcher
from knime_mcp.calls.pool import ClientPool
from knime_mcp.http.openapi import DocumentApiKey
from knime_mcp.tools.tool import MCPTool

__all__ = ["UTCP_CALL_BAR", "UTCP_LIST_BAR", "utcp_figures", "utcp_rounds"]

F = TypeVar("F")
"""``run.py``'s figure type, which this module does not import (``run.py`` imports this one)."""

PROVIDER = [sys.executable, str(Path(__file__).with_name("utcp_provider.py"))]
KEY_VARIABLE = "KNIME_MCP_BENCH_UTCP_KEY"
"""Where the person's key is for ours (``${VAR}``); utcp's client gets it as the variable its manual names."""
MANUAL = "bench"
SEQUENTIAL = 100
CONCURRENT = 50
LISTINGS = 20
UTCP_CALL_BAR = 1.25
"""A call through knime-mcp against utcp's own client (which opens an aiohttp session per call; ours keeps the pool's
client): 0.84x-1.16x measured; the provider's own FastAPI handling is most of a call on both sides."""
UTCP_LIST_BAR = 2.5
"""Reading the manual into tools against utcp's client made and the manual registered: 1.4x-2.0x measured. Ours does
more with the manual (each tool's origin judged against the manual's, schemas shaped, the rows sealed, a new HTTP
pool with the person's TLS settings); the bar catches a doubling of that."""


@contextmanager
def _root_logger_kept() -> Iterator[None]:
    """Inside, ``logging.basicConfig`` finds a handler and does nothing; afterwards the root logger is as before."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    root.handlers[:] = [logging.NullHandler()]
    try:
        yield
    finally:
        root.handlers[:], root.level = handlers, level


with _root_logger_kept():  # utcp's protocols, loaded by its first client, call basicConfig again
    from utcp.plugins.plugin_loader import ensure_plugins_initialized
    from utcp.utcp_client import UtcpClient
    from utcp_http.http_call_template import HttpCallTemplate

    ensure_plugins_initialized()


async def _theirs_client(url: str, key: str) -> UtcpClient:
    client = await UtcpClient.create(config={"variables": {f"{MANUAL}_API_KEY": key}})
    registered = await client.register_manual(
        HttpCallTemplate(name=MANUAL, call_template_type="http", url=f"{url}/utcp", http_method="GET")
    )
    assert registered.success and [tool.name for tool in registered.manual.tools] == [f"{MANUAL}.echo"], registered
    return client


async def _our_tools(url: str) -> list[MCPTool]:
    read = await listing.list_http_tools(
        f"{url}/utcp", auth=DocumentApiKey(kind="header", secret=f"${{{KEY_VARIABLE}}}")
    )
    assert [tool.name for tool in read.tools] == ["echo"] and not read.notes, read
    return read.tools


@asynccontextmanager
async def _sides(url: str, key: str) -> AsyncIterator[tuple[Call, Call]]:
    """Each side's call, its client kept open."""
    (tool,) = await _our_tools(url)
    theirs_client = await _theirs_client(url, key)
    async with ClientPool(check_unsealed=True) as pool:
        dispatcher = Dispatcher(pool)

        async def ours(text: str) -> Any:
            outcome = await dispatcher.call(tool, {"text": text})
            assert outcome.ok and outcome.result is not None, outcome.record.error
            return outcome.result.structured

        async def theirs(text: str) -> Any:
            return await theirs_client.call_tool(f"{MANUAL}.echo", {"text": text})

        try:
            yield ours, theirs
        finally:
            await theirs_client.close()


def _echoed(text: str) -> dict[str, str]:
    """The structured result the provider's ``echo`` answers ``text``."""
    return {"text": text}


async def _listings(url: str, key: str, ours: bool, count: int) -> float:
    with same_gc_state():
        started = time.perf_counter()
        for _ in range(count):
            if ours:
                await _our_tools(url)
            else:
                await (await _theirs_client(url, key)).close()
        return time.perf_counter() - started


async def utcp_rounds(url: str, key: str, rounds: int) -> tuple[Rounds, Rounds, Rounds]:
    """Rounds of sequential calls, of a burst, and of listings: ours against utcp's client."""
    listing = await interleave_async(
        partial(_listings, url, key, True, LISTINGS), partial(_listings, url, key, False, LISTINGS), rounds
    )
    async with _sides(url, key) as (ours, theirs):
        await calls_in_a_row(ours, 10, _echoed)
        await calls_in_a_row(theirs, 10, _echoed)
        sequential = await interleave_async(
            partial(calls_in_a_row, ours, SEQUENTIAL, _echoed),
            partial(calls_in_a_row, theirs, SEQUENTIAL, _echoed),
            rounds,
        )
        concurrent = await interleave_async(
            partial(calls_at_once, ours, CONCURRENT, _echoed),
            partial(calls_at_once, theirs, CONCURRENT, _echoed),
            rounds,
        )
    return sequential, concurrent, listing


@contextmanager
def utcp_provider() -> Iterator[tuple[str, str]]:
    """The provider's URL and key; the key also in :data:`KEY_VARIABLE` for ours."""
    key = secrets.token_urlsafe(16)
    with served([*PROVIDER, "--key", key]) as url, _environment(KEY_VARIABLE, key):
        yield url, key


@contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


def utcp_figures(judged: Callable[..., F], rounds: int) -> Iterator[F]:
    """Figures 15 (sequential calls, ms a call), 15b (a burst, wall ms) and 15c (listing, ms a listing), judged by
    ``judged`` (``run.py``'s)."""
    with utcp_provider() as (url, key):
        sequential, concurrent, listing = anyio.run(utcp_rounds, url, key, rounds)
    ours, theirs = sequential.medians(1000 / SEQUENTIAL)
    what = f"a UTCP manual's tool, {SEQUENTIAL} sequential calls through the dispatcher vs utcp 1.2's `UtcpClient`"
    yield judged("15", what, sequential, f"{ours:.2f} vs {theirs:.2f} ms/call", UTCP_CALL_BAR)
    ours, theirs = concurrent.medians(1000)
    yield judged("15b", f"the same, {CONCURRENT} concurrent calls", concurrent, f"{ours:.0f} vs {theirs:.0f} ms", None)
    ours, theirs = listing.medians(1000 / LISTINGS)
    what = "reading the manual (`list_http_tools`) vs `UtcpClient.create` + `register_manual`"
    yield judged("15c", what, listing, f"{ours:.1f} vs {theirs:.1f} ms", UTCP_LIST_BAR)
