"""Servers that answer in ways that cost a client time or memory: a stdio server sending invalid JSON or a schema
nested too deeply (which failed only at the call timeout), a stream a call that was given up on keeps sending, a JSON
body of unbounded size, and a 40 MB stdio reply (read in quadratic time before).

The servers are fakes (`tests/fakes/fake_hostile_stdio.py`, `tests/fakes/fake_misbehaving_server.py`): no real
server can be made to send such answers.
"""

from __future__ import annotations

import shlex
import sys
import tracemalloc
import uuid

import anyio
import psutil
import pytest

from fixtures.fault_servers import fault_url, seen
from fixtures.processes import child_pids
from fixtures.python_servers import FAKES_DIR
from knime_mcp.config import ServerSpec, Timeouts
from knime_mcp.errors import ServerConnectError, ToolCallError, ToolTimeoutError
from knime_mcp.mcp import transports
from knime_mcp.mcp.client import McpClient

pytestmark = pytest.mark.anyio

SLOW_CALL = Timeouts(connect=10.0, call=60.0)
"""A call timeout far beyond what an immediate failure takes, so a failure at the timeout shows as one."""
CLOSE_WAIT = 10.0
"""How long a test waits for the fake to see its response stream closed, so that it fails rather than hangs."""
CLOSED = "(response stream closed)"


def _hostile_stdio(mode: str, *options: str) -> ServerSpec:
    command = [sys.executable, str(FAKES_DIR / "fake_hostile_stdio.py"), mode, *options]
    return ServerSpec(target=shlex.join(command), timeouts=SLOW_CALL)


async def test_invalid_json_from_a_stdio_server_fails_the_call_at_once_not_at_its_timeout() -> None:
    # Given a stdio server that answers a call with a frame cut off in the middle
    async with McpClient(_hostile_stdio("invalid-json")) as client:
        # When the tool is called
        with pytest.raises(ServerConnectError) as caught:
            await client.call_tool("echo", {"text": "hi"})
        # Then the call fails with the malformed-server error (not a timeout with a hint to raise it)
        assert not isinstance(caught.value, ToolTimeoutError)
        assert caught.value.message.startswith("The server sent a response that is not valid JSON-RPC (Invalid JSON")
        # And the session goes on
        assert [tool.tool_name for tool in await client.list_tools()] == ["echo"]


async def test_a_stdio_tool_schema_nested_too_deeply_fails_the_listing_at_once_saying_so() -> None:
    # Given a stdio server listing a tool whose schema nests 1,000 objects
    async with McpClient(_hostile_stdio("deep-schema")) as client:
        # When its tools are listed
        with pytest.raises(ServerConnectError) as caught:
            await client.list_tools()
    # Then the listing fails saying the answer is nested too deeply, not that the server did not answer in time
    assert caught.value.message.startswith("The server's answer is nested too deeply to read")


async def test_a_40_mb_stdio_reply_arrives_whole() -> None:
    # Given a stdio server whose tool returns 40 MB on one line
    async with McpClient(_hostile_stdio("huge", "mb=40")) as client:
        # When it is called
        result = await client.call_tool("echo", {"text": "hi"})
    # Then the reply arrives whole
    assert len(result.text) == 40_000_000 and not result.is_error


async def test_stdout_reaches_the_sdk_in_whole_lines_so_its_line_buffer_stays_empty() -> None:
    # Given stdout that arrives in chunks cutting lines apart, the last line unterminated
    send, receive = anyio.create_memory_object_stream[bytes](10)
    for chunk in (b'{"a"', b":1}\n{", b'"b":2}\n{"c":3}\n{"d"', b":4}"):
        await send.send(chunk)
    send.close()
    # When the SDK's stdio reader reads it through the stream it is given
    from mcp.client import stdio

    read = [text async for text in stdio.TextReceiveStream(receive)]  # type: ignore[arg-type]
    # Then each piece it gets ends at a line end (it never joins a held part of a line with a new chunk, which made
    # a 40 MB reply take seconds), and the unterminated rest comes last, as before
    assert read == ['{"a":1}\n', '{"b":2}\n{"c":3}\n', '{"d":4}']


@pytest.mark.parametrize("given_up", ["timeout", "cancellation"])
async def test_a_call_given_up_closes_its_streamable_http_response_stream(
    fake_misbehaving_url: str, given_up: str
) -> None:
    # Given a server (speaking the 2025 protocol) that answers a call as an event stream of one byte a second
    key = uuid.uuid4().hex
    timeouts = Timeouts(connect=10.0, call=1.0 if given_up == "timeout" else 60.0)
    spec = ServerSpec(target=fault_url(fake_misbehaving_url, "trickle", key=key, on="tools/call"), timeouts=timeouts)
    async with McpClient(spec) as client:
        # When the call times out, or is cancelled (KNIME's cancel button)
        if given_up == "timeout":
            with pytest.raises(ToolTimeoutError):
                await client.call_tool("echo", {"text": "hi"})
        else:
            with anyio.move_on_after(1.0):
                await client.call_tool("echo", {"text": "hi"})
        # Then its response stream is closed while the session stays open, instead of being read to its end
        received: list[str] = []
        with anyio.move_on_after(CLOSE_WAIT):
            while CLOSED not in (received := await anyio.to_thread.run_sync(seen, fake_misbehaving_url, key)):
                await anyio.sleep(0.1)
        assert CLOSED in received


async def test_a_json_reply_over_the_limit_fails_that_call_only_and_the_session_goes_on(
    fake_misbehaving_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a limit of 1 MiB per message (lowered so the test need not send 64 MiB), and a server that answers a
    # call with a 2 MB application/json body
    monkeypatch.setattr(transports, "MAX_MESSAGE_BYTES", 1024 * 1024)
    spec = ServerSpec(target=fault_url(fake_misbehaving_url, "huge", mb=2, key=uuid.uuid4().hex))
    async with McpClient(spec) as client:
        # When the tool is called
        with pytest.raises(ToolCallError) as caught:
            await client.call_tool("echo", {"text": "hi"})
        # Then that call fails as a reply over the limit does over server-sent events, and the session goes on
        assert "larger than knime-mcp reads in one message: the tool ran" in str(caught.value)
        assert "1048576 byte limit" in str(caught.value)
        assert [tool.tool_name for tool in await client.list_tools()] == ["echo"]


async def _over_the_limit_without_a_line_end(spec: ServerSpec) -> tuple[ToolCallError, int, int]:
    """Call the endless stdio fake's tool; the error, and the bytes the client held at most and still holds once the
    server is gone (which is awaited: the session stops it). Python's own count (:mod:`tracemalloc`), since the
    process's RSS keeps memory the allocator took back."""
    others = child_pids()
    tracemalloc.start()
    try:
        async with McpClient(spec) as client:
            with pytest.raises(ToolCallError) as caught:
                await client.call_tool("echo", {"text": "hi"})
            servers = [psutil.Process(pid) for pid in child_pids() - others]
            _, alive = await anyio.to_thread.run_sync(lambda: psutil.wait_procs(servers, timeout=CLOSE_WAIT))
            assert not alive, "the server that wrote without end was not stopped"
            held, most = tracemalloc.get_traced_memory()
            # And the session goes on: the next request starts the server again
            assert [tool.tool_name for tool in await client.list_tools()] == ["echo"]
    finally:
        tracemalloc.stop()
    return caught.value, held, most


ENDLESS_CALL = Timeouts(connect=10.0, call=20.0)
"""Before the limit, such a call ran to its timeout (or held the bytes after it); shorter than SLOW_CALL, since the
server's output then stays in memory meanwhile."""


async def test_a_stdio_server_writing_past_the_limit_without_a_line_end_is_stopped_and_the_call_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a limit of 1 MiB per message (lowered so the test need not send 64 MiB), and a stdio server that answers
    # a call with 3 MiB and no line end, then keeps the pipe open
    monkeypatch.setattr(transports, "MAX_MESSAGE_BYTES", 1024 * 1024)
    command = [sys.executable, str(FAKES_DIR / "fake_hostile_stdio.py"), "endless", "mb=3"]
    # When the tool is called
    spec = ServerSpec(target=shlex.join(command), timeouts=ENDLESS_CALL)
    error, _, _ = await _over_the_limit_without_a_line_end(spec)
    # Then the call fails at once saying what happened and what to do, and the server is stopped
    assert "larger than knime-mcp reads in one message" in error.message
    assert "more than the 1048576 byte limit (1 MiB) without a line end" in error.message and error.hint


async def test_a_stdio_line_over_the_real_64_mib_limit_is_dropped_not_held() -> None:
    # Given a stdio server that answers a call with 70 MiB and no line end, then keeps the pipe open
    command = [sys.executable, str(FAKES_DIR / "fake_hostile_stdio.py"), "endless", "mb=70"]
    # When the tool is called
    spec = ServerSpec(target=shlex.join(command), timeouts=ENDLESS_CALL)
    error, held, most = await _over_the_limit_without_a_line_end(spec)
    # Then the call fails at the 64 MiB limit, the line never took much more than that, and it is not kept
    assert "more than the 67108864 byte limit (64 MiB) without a line end" in error.message
    assert most < 2 * transports.MAX_MESSAGE_BYTES, f"the client held {most / 2**20:.0f} MiB"
    assert held < 8 * 1024 * 1024, f"the client still holds {held / 2**20:.0f} MiB"
