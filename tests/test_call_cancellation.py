"""A call stopped while it runs is cancelled on the server the way the protocol says for its transport, and the
session goes on: :class:`~knime_mcp.mcp.client.McpClient` against tests/servers/chat_server.py, whose `wait` tool
writes down what stopped it, over stdio, Streamable HTTP (the 2026-07-28 protocol, and the ``initialize`` era before
it) and SSE.

On stdio, SSE and Streamable HTTP before 2026-07-28 that is ``notifications/cancelled`` with the call's request id and
a reason, after which the same session answers the next call. On Streamable HTTP at 2026-07-28 it is closing the
call's response stream: the specification says the server MUST treat that as the cancellation and expects no
notification (the SDK's server drops one), so none is sent.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from fixtures.python_servers import SERVERS_DIR, running_server
from knime_mcp.config import Handshake, ServerSpec
from knime_mcp.mcp.client import McpClient
from servers.chat_server import how_the_wait_ended

pytestmark = pytest.mark.anyio

_PATIENCE = 60.0
"""Seconds a test waits for the server to write something down (a wait for readiness, not a timing)."""

_CHAT_SERVER = [sys.executable, str(SERVERS_DIR / "chat_server.py")]


@pytest.fixture
def marks(tmp_path: Path) -> Path:
    return tmp_path / "marks.txt"


@pytest.fixture
def http_url(marks: Path, tmp_path: Path) -> Iterator[str]:
    command = [*_CHAT_SERVER, str(marks), "--transport", "streamable-http"]
    with running_server(command, tmp_path / "server.log") as server:
        yield server.url


@pytest.fixture
def sse_url(marks: Path, tmp_path: Path) -> Iterator[str]:
    with running_server([*_CHAT_SERVER, str(marks), "--transport", "sse"], tmp_path / "server.log") as server:
        yield server.url


async def _started(marks: Path) -> None:
    with anyio.fail_after(_PATIENCE):
        while not (marks.exists() and "started" in marks.read_text()):
            await anyio.sleep(0.01)


async def _stop_wait(client: McpClient, marks: Path) -> None:
    """Call `wait` and cancel the call once the server started it, as the chat's Stop does."""
    with anyio.CancelScope() as stop:

        async def stop_once_started() -> None:
            await _started(marks)
            stop.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(stop_once_started)
            await client.call_tool("wait", {})


async def _ended_as(marks: Path, ended_as: list[str]) -> None:
    """Waits until the server wrote down that its `wait` call ended as ``ended_as`` says (see how_the_wait_ended)."""
    with anyio.fail_after(_PATIENCE):
        while how_the_wait_ended(marks) != ended_as:
            await anyio.sleep(0.01)


async def _stopped_and_asked_again(spec: ServerSpec, marks: Path, ended_as: list[str]) -> None:
    """A call stopped mid-way ends on the server as ``ended_as`` says, and the next call reaches the same server
    process (and HTTP session, where there is one)."""
    async with McpClient(spec) as client:
        before = (await client.call_tool("whoami", {})).text
        await _stop_wait(client, marks)
        await _ended_as(marks, ended_as)
        after = (await client.call_tool("whoami", {})).text
    assert how_the_wait_ended(marks) == ended_as  # nothing more came later
    assert before.startswith("call 1 in process ") and after == before.replace("call 1 ", "call 2 ", 1)


NOTIFIED = ["interrupted", "notifications/cancelled: caller cancelled"]
"""The call's handler interrupted by the protocol's notification, with the SDK's reason."""


@pytest.mark.parametrize("handshake", ["discover", "initialize"])
async def test_stopping_a_call_over_stdio_notifies_the_server_on_every_protocol(
    marks: Path, handshake: Handshake
) -> None:
    spec = ServerSpec(target=shlex.join([*_CHAT_SERVER, str(marks)]), name="chat", handshake=handshake)
    await _stopped_and_asked_again(spec, marks, NOTIFIED)


async def test_stopping_a_call_over_streamable_http_before_2026_sends_notifications_cancelled_in_its_session(
    http_url: str, marks: Path
) -> None:
    spec = ServerSpec(target=http_url, name="chat", handshake="initialize")
    await _stopped_and_asked_again(spec, marks, NOTIFIED)


async def test_stopping_a_call_over_sse_sends_notifications_cancelled(sse_url: str, marks: Path) -> None:
    await _stopped_and_asked_again(ServerSpec(target=sse_url, name="chat"), marks, NOTIFIED)


async def test_stopping_a_call_over_streamable_http_at_2026_closes_its_stream_and_the_server_stops_the_call(
    http_url: str, marks: Path
) -> None:
    # The closed stream is the call's cancellation on this transport: the server interrupts the handler, unnotified
    await _stopped_and_asked_again(ServerSpec(target=http_url, name="chat"), marks, ["interrupted"])


async def test_a_call_stopped_right_before_the_client_closes_still_reaches_the_server_as_the_notification(
    http_url: str, marks: Path
) -> None:
    # Given a call over a Streamable HTTP session, stopped as the chat is closed (the view closed mid-call)
    async with McpClient(ServerSpec(target=http_url, name="chat", handshake="initialize")) as client:
        await _stop_wait(client, marks)
    # Then the notification went out before the session ended, and the server cancelled the call by it
    await _ended_as(marks, NOTIFIED)
