"""A session that died before a request was written is replaced and the request sent on the new one, whatever the
tool; a session that died after the request was written resends only a call that is safe to repeat, and reports any
other call as one that may or may not have run."""

from __future__ import annotations

import shlex
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import pytest

from fixtures.fault_servers import fault_url, seen
from fixtures.processes import child_pids, kill_pids
from fixtures.python_servers import DEMO_COMMAND, RunningServer, running_server
from knime_mcp import McpClient, ServerSpec

pytestmark = pytest.mark.anyio

ORDER = {"customer": {"name": "Ada", "email": "ada@example.com"}, "items": [{"sku": "A-1", "quantity": 2}]}


@asynccontextmanager
async def _killed_after(pids: set[int], seconds: float) -> AsyncIterator[None]:
    """The processes are killed ``seconds`` into the block, while the call in it runs."""

    async def kill_soon() -> None:
        await anyio.sleep(seconds)
        kill_pids(pids)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(kill_soon)
        yield


def _demo_sse(log_path: Path, port: int = 0) -> AbstractContextManager[RunningServer]:
    return running_server([*DEMO_COMMAND, "--transport", "sse", "--port", str(port)], log_path)


async def test_a_call_after_an_sse_server_restarted_goes_to_a_new_session_even_when_not_safe_to_repeat(
    tmp_path: Path,
) -> None:
    async with AsyncExitStack() as stack:
        with _demo_sse(tmp_path / "first.log") as first:
            client = await stack.enter_async_context(McpClient(ServerSpec(target=first.url)))
            assert (await client.call_tool("echo", {"text": "before"})).text == "before"
        # A real restart takes a while, during which the client reads the end of the old stream; the fixture stops
        # and starts the server without yielding to the event loop, so let the client read it here
        await anyio.sleep(0.2)
        with _demo_sse(tmp_path / "second.log", port=urlsplit(first.url).port):
            order = await client.call_tool("create_order", ORDER)
            echoed = await client.call_tool("echo", {"text": "after"})
    assert not order.is_error and order.structured["total_quantity"] == 2
    assert echoed.text == "after"


async def test_a_call_after_the_stdio_server_died_starts_a_new_one_even_when_not_safe_to_repeat(
    demo_stdio_command: list[str],
) -> None:
    others = child_pids()
    async with McpClient(ServerSpec(target=shlex.join(demo_stdio_command))) as client:
        await client.call_tool("echo", {"text": "warm up"})
        kill_pids(child_pids() - others)
        order = await client.call_tool("create_order", ORDER)
        kill_pids(child_pids() - others)
        echoed = await client.call_tool("echo", {"text": "after"})
    assert not order.is_error and order.structured["total_quantity"] == 2
    assert echoed.text == "after"


async def test_a_repeatable_call_whose_stdio_server_died_while_it_ran_is_sent_again(
    demo_stdio_command: list[str],
) -> None:
    others = child_pids()
    async with McpClient(ServerSpec(target=shlex.join(demo_stdio_command))) as client:
        await client.call_tool("echo", {"text": "warm up"})
        async with _killed_after(child_pids() - others, 0.5):
            result = await client.call_tool("sleep", {"seconds": 1}, repeatable=True)
    assert result.text == "Slept 1 s."


async def test_a_lost_stdio_session_is_replaced_and_a_repeatable_call_goes_through(
    demo_stdio_command: list[str],
) -> None:
    others = child_pids()
    async with McpClient(ServerSpec(target=shlex.join(demo_stdio_command))) as client:
        assert (await client.call_tool("echo", {"text": "before"})).text == "before"
        kill_pids(child_pids() - others)
        after = await client.call_tool("echo", {"text": "after"}, repeatable=True)
        again = await client.call_tool("echo", {"text": "again"})
    assert (after.text, again.text) == ("after", "again")


async def test_a_call_cut_off_by_a_lost_session_is_not_repeated_unless_safe(demo_stdio_command: list[str]) -> None:
    from knime_mcp.errors import OutcomeUnknownError

    others = child_pids()
    async with McpClient(ServerSpec(target=shlex.join(demo_stdio_command))) as client:
        await client.call_tool("echo", {"text": "warm up"})
        async with _killed_after(child_pids() - others, 0.5):
            with pytest.raises(OutcomeUnknownError, match="may or may not have run"):
                await client.call_tool("sleep", {"seconds": 30})
        assert (await client.call_tool("echo", {"text": "reconnected"})).text == "reconnected"


def _demo_http(log_path: Path) -> AbstractContextManager[RunningServer]:
    return running_server([*DEMO_COMMAND, "--transport", "streamable-http", "--port", "0"], log_path)


@pytest.mark.parametrize(
    ("repeatable", "error", "said"),
    [
        # not safe to repeat: it may have run, and the hint says reconnecting failed too
        (False, "OutcomeUnknownError", "it may or may not have run"),
        # safe to repeat: the session was lost during the call (a connection error, retried as one)
        (True, "SessionLostError", "The session was lost during the call of tool 'sleep', and reconnecting "),
    ],
)
async def test_a_call_in_flight_when_the_http_server_dies_is_not_reported_as_never_sent(
    tmp_path: Path, repeatable: bool, error: str, said: str
) -> None:
    from knime_mcp import errors

    # Given a Streamable HTTP session to a real server, and a call whose request has reached it
    with _demo_http(tmp_path / "server.log") as server:
        async with McpClient(ServerSpec(target=server.url)) as client:
            await client.call_tool("echo", {"text": "warm up"})
            # When the server dies while the call runs, so that reconnecting fails too
            async with _killed_after({server.process.pid}, 0.5):
                with pytest.raises(getattr(errors, error)) as caught:
                    await client.call_tool("sleep", {"seconds": 30}, repeatable=repeatable)
    # Then it is reported as sent (it may have run, or the session was lost during it), never as "could not connect"
    # alone, which would say the request never got through
    assert said in caught.value.message and not isinstance(caught.value, errors.SessionExpiredError)
    assert repeatable or caught.value.hint.startswith("Reconnecting failed too (Could not connect")


@pytest.mark.parametrize("serve", [_demo_http, _demo_sse], ids=["streamable-http", "sse"])
async def test_a_call_after_the_server_stopped_is_a_connect_error_not_an_unknown_outcome(
    tmp_path: Path, serve: Callable[[Path], AbstractContextManager[RunningServer]]
) -> None:
    from knime_mcp.errors import OutcomeUnknownError, ServerConnectError

    # Given a session to a real server that has since stopped
    async with AsyncExitStack() as stack:
        with serve(tmp_path / "server.log") as server:
            client = await stack.enter_async_context(McpClient(ServerSpec(target=server.url)))
            await client.call_tool("echo", {"text": "before"})
        # When a writing call is made: its request cannot reach the server
        with pytest.raises(ServerConnectError) as caught:
            await client.call_tool("create_order", ORDER)
    # Then it is reported as never sent
    assert not isinstance(caught.value, OutcomeUnknownError)
    assert "Could not connect" in str(caught.value)


async def test_a_forgotten_session_answered_as_the_typescript_sdk_does_reconnects_and_is_no_false_timeout(
    fake_misbehaving_url: str,
) -> None:
    """The TypeScript SDK answers a session id it does not know with 404 and -32001, the code the Python SDK uses for
    a request timeout: that is a forgotten session, not a call that "did not answer"."""
    key = "ts-forgot"
    url = fault_url(fake_misbehaving_url, "status", body="session-not-found", times=1, key=key, on="tools/call")
    async with McpClient(ServerSpec(target=url)) as client:
        first = await client.call_tool("echo", {"text": "once"})
        later = [(await client.call_tool("echo", {"text": f"then {n}"})).text for n in range(2)]
    assert (first.text, later) == ("once", ["then 0", "then 1"])
    assert seen(fake_misbehaving_url, key).count("initialize") == 2  # a new session after the 404


async def test_a_call_after_an_http_server_forgot_the_session_opens_a_new_one_even_when_not_safe_to_repeat(
    tmp_path: Path,
) -> None:
    """The SDK's own server answers a session id it does not know with 404 and a JSON-RPC error ("Session not
    found") in the body; that is the forgotten session, not the tool's answer, and the request never ran."""
    async with AsyncExitStack() as stack:
        # Given a Streamable HTTP session with a session id (the `initialize` handshake), after several calls
        with _demo_http(tmp_path / "first.log") as first:
            spec = ServerSpec(target=first.url, handshake="initialize")
            client = await stack.enter_async_context(McpClient(spec))
            for number in range(3):
                assert (await client.call_tool("echo", {"text": f"before {number}"})).text == f"before {number}"
        # When the server restarts with a new session store, and calls follow that are not safe to repeat
        command = [*DEMO_COMMAND, "--transport", "streamable-http", "--port", str(urlsplit(first.url).port)]
        with running_server(command, tmp_path / "second.log"):
            order = await client.call_tool("create_order", ORDER)
            echoed = [(await client.call_tool("echo", {"text": f"after {n}"})).text for n in range(3)]
    # Then the first goes to a new session and runs once, and the later ones follow it there
    assert not order.is_error and order.structured["total_quantity"] == 2
    assert echoed == ["after 0", "after 1", "after 2"]
