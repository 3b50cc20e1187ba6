"""A session that died before a request was written is replaced and the request sent on the new one, whatever the
tool; a session that died after the request was written resends only a call that is safe to repeat (the other case,
a call that may have run, is in ``test_client.py``)."""

from __future__ import annotations

import shlex
from contextlib import AbstractContextManager, AsyncExitStack
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import pytest

from fixtures.python_servers import DEMO_COMMAND, RunningServer, running_server
from knime_mcp import McpClient, ServerSpec

pytestmark = pytest.mark.anyio

ORDER = {"customer": {"name": "Ada", "email": "ada@example.com"}, "items": [{"sku": "A-1", "quantity": 2}]}


def _children() -> set[int]:
    import psutil

    return {child.pid for child in psutil.Process().children(recursive=True)}


def _kill(pids: set[int]) -> None:
    import psutil

    for pid in pids:
        process = psutil.Process(pid)
        process.kill()
        process.wait(10)


def _demo_sse(log_path: Path, port: int = 0) -> AbstractContextManager[RunningServer]:
    return running_server([*DEMO_COMMAND, "--transport", "sse", "--port", str(port)], log_path)


async def test_a_call_after_an_sse_server_restarted_goes_to_a_new_session_even_when_not_safe_to_repeat(
    tmp_path: Path,
) -> None:
    async with AsyncExitStack() as stack:
        with _demo_sse(tmp_path / "first.log") as first:
            client = await stack.enter_async_context(McpClient(ServerSpec(target=first.url)))
            assert (await client.call_tool("echo", {"text": "before"})).text == "before"
        with _demo_sse(tmp_path / "second.log", port=urlsplit(first.url).port):
            order = await client.call_tool("create_order", ORDER)
            echoed = await client.call_tool("echo", {"text": "after"})
    assert not order.is_error and order.structured["total_quantity"] == 2
    assert echoed.text == "after"


async def test_a_call_after_the_stdio_server_died_starts_a_new_one_even_when_not_safe_to_repeat(
    demo_stdio_command: list[str],
) -> None:
    others = _children()
    async with McpClient(ServerSpec(target=shlex.join(demo_stdio_command))) as client:
        await client.call_tool("echo", {"text": "warm up"})
        _kill(_children() - others)
        order = await client.call_tool("create_order", ORDER)
        _kill(_children() - others)
        echoed = await client.call_tool("echo", {"text": "after"})
    assert not order.is_error and order.structured["total_quantity"] == 2
    assert echoed.text == "after"


async def test_a_repeatable_call_whose_stdio_server_died_while_it_ran_is_sent_again(
    demo_stdio_command: list[str],
) -> None:
    others = _children()
    async with McpClient(ServerSpec(target=shlex.join(demo_stdio_command))) as client:
        await client.call_tool("echo", {"text": "warm up"})
        server = _children() - others

        async def kill_soon() -> None:
            await anyio.sleep(0.5)
            _kill(server)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(kill_soon)
            result = await client.call_tool("sleep", {"seconds": 1}, repeatable=True)
    assert result.text == "Slept 1 s."


async def test_a_call_after_the_sse_server_stopped_is_a_connect_error_not_an_unknown_outcome(tmp_path: Path) -> None:
    from knime_mcp.errors import OutcomeUnknownError, ServerConnectError

    async with AsyncExitStack() as stack:
        with _demo_sse(tmp_path / "server.log") as server:
            client = await stack.enter_async_context(McpClient(ServerSpec(target=server.url)))
            await client.call_tool("echo", {"text": "before"})
        with pytest.raises(ServerConnectError) as caught:
            await client.call_tool("create_order", ORDER)
    assert not isinstance(caught.value, OutcomeUnknownError)
    assert "Could not connect" in str(caught.value)
