"""Figure 11: listing twenty servers that each answer ``tools/list`` after 200 ms, against listing one of them.

Twenty :mod:`slow_server` processes run over Streamable HTTP on 127.0.0.1, started before the rounds. Each round
lists them with :func:`~knime_mcp.calls.listing.list_servers_tools` as a pasted configuration does (a key per
server, names prefixed by it), against the same call with one of them: a listing that connects to the servers one
after the other takes twenty times as long as one server, one that connects to them together about as long. Every
listing is checked (every server's five tools, under its key, none failed).
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

import anyio
from _rounds import Rounds, interleave_async
from _servers import served

from knime_mcp.calls.listing import list_servers_tools
from knime_mcp.config import ServerSpec

SLOW_SERVER = Path(__file__).with_name("slow_server.py")
TOOLS_EACH = 5


async def _listed_seconds(servers: dict[str | None, ServerSpec]) -> float:
    started = time.perf_counter()
    listing = await list_servers_tools(servers)
    seconds = time.perf_counter() - started
    assert not listing.failed, listing.failed
    assert len(listing.tools) == TOOLS_EACH * len(servers), [tool.name for tool in listing.tools]
    assert all(tool.name.startswith(f"{tool.server.name}_") for tool in listing.tools)
    return seconds


def many_servers_rounds(count: int, rounds: int) -> Rounds:
    """Rounds of listing ``count`` slow servers against listing one of them."""
    with contextlib.ExitStack() as stack:
        urls = [stack.enter_context(served([sys.executable, str(SLOW_SERVER), f"s{n:02d}"])) for n in range(count)]
        servers: dict[str | None, ServerSpec] = {
            f"s{n:02d}": ServerSpec(target=url, name=f"s{n:02d}") for n, url in enumerate(urls)
        }
        first = dict(list(servers.items())[:1])

        async def measure() -> Rounds:
            await _listed_seconds(servers)  # warm: first connections, imports
            return await interleave_async(lambda: _listed_seconds(servers), lambda: _listed_seconds(first), rounds)

        return anyio.run(measure)
