"""Test layer: the npm MCP peers answer the raw `mcp` SDK on every transport the fixtures offer.

These pin down the fixtures in `fixtures/npm_servers.py`; the product's own client is tested against the same peers
elsewhere.
"""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.client import Transport
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from fixtures.npm_servers import RunningPeer
from fixtures.processes import listening_addresses


async def _tool_names(transport: Transport) -> set[str]:
    async with Client(transport) as client:
        listing = await client.list_tools()
    return {tool.name for tool in listing.tools}


def _stdio(command: list[str], env: dict[str, str] | None = None) -> Transport:
    return stdio_client(StdioServerParameters(command=command[0], args=command[1:], env=env))


@pytest.mark.anyio
async def test_everything_over_stdio_lists_echo_and_get_sum(everything_stdio_command: list[str]) -> None:
    assert {"echo", "get-sum"} <= await _tool_names(_stdio(everything_stdio_command))


@pytest.mark.anyio
async def test_everything_over_sse_lists_echo_and_get_sum(everything_sse_url: str) -> None:
    assert {"echo", "get-sum"} <= await _tool_names(sse_client(everything_sse_url))


@pytest.mark.anyio
async def test_everything_over_streamable_http_lists_echo_and_get_sum(everything_http_url: str) -> None:
    assert {"echo", "get-sum"} <= await _tool_names(streamable_http_client(everything_http_url))


@pytest.mark.anyio
async def test_memory_over_stdio_lists_create_entities(
    memory_stdio_command: list[str], memory_stdio_env: dict[str, str]
) -> None:
    assert "create_entities" in await _tool_names(_stdio(memory_stdio_command, memory_stdio_env))


@pytest.mark.anyio
async def test_sequential_thinking_over_stdio_lists_sequentialthinking(
    sequential_thinking_stdio_command: list[str],
) -> None:
    assert await _tool_names(_stdio(sequential_thinking_stdio_command)) == {"sequentialthinking"}


@pytest.mark.parametrize("peer", ["everything_sse_server", "everything_http_server"])
def test_http_peer_listens_on_loopback_only(peer: str, request: pytest.FixtureRequest) -> None:
    running: RunningPeer = request.getfixturevalue(peer)
    assert listening_addresses(running.pid) == {"127.0.0.1"}
