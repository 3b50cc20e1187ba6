"""Figure 16: a search of an MCP Registry as ``knime-mcp servers search`` makes it, against raw ``httpx`` GETs of the
same pages.

The registry is the tests' stand-in (``tests/servers/registry_server.py``: the official API's ``servers`` list over
recorded entries, three a page, so that every search follows the cursor). Ours is
:func:`~knime_mcp.registry.catalog.search_servers` with no text, what the command calls before printing: the
presets matched, a new HTTP pool, the registry's pages read within bounds, each entry read and checked. The peer is
an ``httpx.AsyncClient`` of its own per search, as a fresh command has, given a TLS context made once (httpx makes
one for every client at once, which costs most of a search here; knime-mcp's pool makes one only for ``https://``),
reading the same pages with the same query (``limit``, ``version``, ``cursor``), each answer parsed with
``response.json()``. Every search is checked: every registry entry ours kept came back to the peer too.
"""

from __future__ import annotations

import ssl
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx
from _rounds import Rounds, interleave_async, same_gc_state
from _servers import served

from knime_mcp.registry import catalog

__all__ = ["REGISTRY_BAR", "registry_figures", "registry_rounds"]

F = TypeVar("F")
"""``run.py``'s figure type, which this module does not import (``run.py`` imports this one)."""

STAND_IN = [sys.executable, str(Path(__file__).parents[1] / "tests" / "servers" / "registry_server.py")]
SEARCHES = 20
LIMIT = 50
PRESET = "preset"
"""The ``source`` of a preset's entry; a registry's entries name the registry."""
REGISTRY_BAR = 1.25
"""A search through knime-mcp against the raw pages, each side with a client and a connection of its own per search:
0.94x-1.16x measured over nine runs at load 2-9; 1.35x with our own work doubled (``--slowdown 2``, the HTTP requests
counted as the peer's, which sends them too), so the bar lies between."""


async def _ours(url: str) -> set[str]:
    found = await catalog.search_servers("", registry_url=url, limit=LIMIT)
    assert found.registry_error is None, found.registry_error
    return {entry.name for entry in found.entries if entry.source != PRESET}


async def _raw(tls: ssl.SSLContext, url: str) -> set[str]:
    names: list[str] = []
    cursor = ""
    async with httpx.AsyncClient(timeout=20, verify=tls) as client:
        while True:
            query = {"limit": str(LIMIT), "version": "latest", **({"cursor": cursor} if cursor else {})}
            response = await client.get(f"{url}/v0.1/servers", params=query, headers={"Accept": "application/json"})
            response.raise_for_status()
            page: dict[str, Any] = response.json()
            names += [item["server"]["name"] for item in page["servers"]]
            cursor = page["metadata"].get("nextCursor") or ""
            if not cursor or len(names) >= LIMIT:
                return set(names)


async def _searches(search: Callable[[], Any], expected: set[str] | None, count: int) -> float:
    with same_gc_state():
        started = time.perf_counter()
        for _ in range(count):
            found = await search()
            assert expected is None or found <= expected, found - (expected or set())
        return time.perf_counter() - started


async def registry_rounds(url: str, rounds: int) -> Rounds:
    """Rounds of :data:`SEARCHES` searches: ours against the raw pages."""
    tls = ssl.create_default_context()
    every = await _raw(tls, url)
    assert await _ours(url) <= every
    return await interleave_async(
        partial(_searches, partial(_ours, url), every, SEARCHES),
        partial(_searches, partial(_raw, tls, url), None, SEARCHES),
        rounds,
    )


def registry_figures(judged: Callable[..., F], rounds: int) -> Iterator[F]:
    """Figure 16 (ms a search), judged by ``judged`` (``run.py``'s)."""
    with served(STAND_IN) as url:
        measured = anyio.run(registry_rounds, url, rounds)
    ours, raw = measured.medians(1000 / SEARCHES)
    what = "`servers search` (`search_servers`) over the registry stand-in, 3 entries a page, vs raw `httpx` GETs"
    yield judged("16", what, measured, f"{ours:.1f} vs {raw:.1f} ms a search", REGISTRY_BAR)
