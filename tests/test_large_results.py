"""Tool results larger than the SDK's 1 MiB default per server-sent event arrive whole: over SSE, and over Streamable
HTTP answering with an event stream, as the npm server-everything does. Before, a 3 MB result lost the session
("it may or may not have run"), and the calls running alongside it with it."""

from __future__ import annotations

import tracemalloc
import uuid

import anyio
import pytest

from fixtures.fault_servers import fault_url
from knime_mcp.config import ServerSpec, Timeouts
from knime_mcp.errors import OutcomeUnknownError, ToolCallError
from knime_mcp.mcp import transports
from knime_mcp.mcp.client import McpClient
from knime_mcp.mcp.sync import SyncMcpClient

BIG = 3 * 1024 * 1024

ECHOES = {
    "demo_sse_url": ("echo", "text"),
    "everything_sse_url": ("echo", "message"),
    "everything_http_url": ("echo", "message"),
}
"""Servers whose replies travel as server-sent events, with their echo tool and its parameter."""


@pytest.mark.parametrize("server", ECHOES)
def test_a_3_mb_result_arrives_whole_beside_small_calls_on_one_session(
    server: str, request: pytest.FixtureRequest
) -> None:
    # Given one session to a server that streams its replies as server-sent events
    url: str = request.getfixturevalue(server)
    tool, parameter = ECHOES[server]
    with SyncMcpClient(ServerSpec(target=url)) as client:
        # When a tool returns 3 MB, between two small calls on the same session
        before = client.call_tool(tool, {parameter: "small"})
        big = client.call_tool(tool, {parameter: "x" * BIG})
        after = client.call_tool(tool, {parameter: "small again"})
    # Then all three arrive, the big one whole
    assert "small" in before.text and "small again" in after.text
    assert big.text.count("x") == BIG and not big.is_error


@pytest.mark.parametrize("server", ECHOES)
@pytest.mark.anyio
async def test_a_reply_over_the_limit_fails_that_call_only_while_calls_alongside_go_on(
    server: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a session whose per-message limit is 1 MiB (lowered here so the test need not send 64 MiB), on a server
    # that answers first with the id (Python) or last (TypeScript), over SSE or Streamable HTTP
    monkeypatch.setattr(transports, "MAX_MESSAGE_BYTES", 1024 * 1024)
    url: str = request.getfixturevalue(server)
    tool, parameter = ECHOES[server]
    small: dict[int, str] = {}
    async with McpClient(ServerSpec(target=url), max_concurrency=4) as client:

        async def echo_small(index: int) -> None:
            small[index] = (await client.call_tool(tool, {parameter: f"small {index}"})).text

        # When a reply is over the limit while three small calls run alongside it
        async with anyio.create_task_group() as group:
            for index in range(3):
                group.start_soon(echo_small, index)
            with pytest.raises(ToolCallError) as failed:
                await client.call_tool(tool, {parameter: "x" * BIG})
        # Then that call fails saying the tool ran and its result was too large, the calls alongside succeed,
        # and the session goes on
        assert "larger than knime-mcp reads in one message: the tool ran" in str(failed.value)
        assert "Ask the tool for less" in str(failed.value)
        assert all(f"small {index}" in small[index] for index in range(3))
        assert "after" in (await client.call_tool(tool, {parameter: "after"})).text


TOO_LARGE = "refused the request as too large (HTTP 413); it did not run"
REFUSALS: dict[str, tuple[type[Exception], str]] = {
    "demo_sse_url": (ToolCallError, TOO_LARGE),
    "everything_http_url": (ToolCallError, TOO_LARGE),
    # It closes the connection while the request is still being sent: whether it ran cannot be known.
    "everything_sse_url": (OutcomeUnknownError, "it may or may not have run"),
}
"""How each server turns away a request of 15 MiB, and what the call then says."""


@pytest.mark.parametrize("server", REFUSALS)
def test_a_request_the_server_turns_away_fails_at_once_and_the_session_goes_on(
    server: str, request: pytest.FixtureRequest
) -> None:
    # Given a session to a server that takes requests up to a few MiB (legacy SSE posts each request on its own,
    # and the SDK only logs a post that fails, so the call used to wait for its timeout)
    url: str = request.getfixturevalue(server)
    tool, parameter = ECHOES[server]
    error, message = REFUSALS[server]
    with SyncMcpClient(ServerSpec(target=url, timeouts=Timeouts(call=20))) as client:
        # When a call's arguments are larger than the server accepts
        with pytest.raises(error) as failed:
            client.call_tool(tool, {parameter: "x" * 5 * BIG})
        # Then it fails with what the server did, not by waiting for its timeout, and the next call works
        assert message in str(failed.value)
        assert "timed out" not in str(failed.value.__cause__)
        assert "small" in client.call_tool(tool, {parameter: "small"}).text


@pytest.mark.anyio
async def test_a_gzip_encoded_reply_is_held_to_the_limit_as_it_unpacks_not_as_it_came_over_the_wire(
    fake_misbehaving_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a limit of 1 MiB per message (lowered as above), and a server whose tool answers with 50 MB of JSON,
    # gzip-encoded: about 200 KB on the wire, under the limit as sent (which is what was counted before)
    monkeypatch.setattr(transports, "MAX_MESSAGE_BYTES", 1024 * 1024)
    spec = ServerSpec(target=fault_url(fake_misbehaving_url, "huge", mb=50, encoding="gzip", key=uuid.uuid4().hex))
    async with McpClient(spec) as client:
        # When the tool is called
        tracemalloc.start()
        try:
            with pytest.raises(ToolCallError) as failed:
                await client.call_tool("echo", {"text": "hi"})
            _, most = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        # Then it is refused as a stdio line or a plain body past the limit is, saying what happened and what to do,
        # without unpacking the 50 MB (before, all of it arrived, and a gzip bomb could fill the memory)
        assert "larger than knime-mcp reads in one message: the tool ran" in str(failed.value)
        assert "Ask the tool for less" in str(failed.value)
        assert most < 16 * 1024 * 1024, f"the client held {most / 2**20:.0f} MiB"
        # And the session goes on
        assert [tool.tool_name for tool in await client.list_tools()] == ["echo"]
    # While a gzip-encoded reply within the limit (1 MB) arrives whole
    within = ServerSpec(target=fault_url(fake_misbehaving_url, "huge", mb=1, encoding="gzip", key=uuid.uuid4().hex))
    async with McpClient(within) as client:
        assert (await client.call_tool("echo", {"text": "hi"})).text == "0123456789" * 100_000
