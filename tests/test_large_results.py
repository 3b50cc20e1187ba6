"""Tool results larger than the SDK's 1 MiB default per server-sent event arrive whole: over SSE, and over Streamable
HTTP answering with an event stream, as the npm server-everything does. Before, a 3 MB result lost the session
("it may or may not have run"), and the calls running alongside it with it."""

from __future__ import annotations

import pytest

from knime_mcp import transports
from knime_mcp.config import ServerSpec
from knime_mcp.errors import ToolCallError
from knime_mcp.sync import SyncMcpClient

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


def test_a_reply_over_the_limit_fails_that_call_only_with_what_happened(
    everything_http_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a session whose per-message limit is 1 MiB (lowered here so the test need not send 64 MiB)
    monkeypatch.setattr(transports, "MAX_MESSAGE_BYTES", 1024 * 1024)
    with SyncMcpClient(ServerSpec(target=everything_http_url)) as client:
        # When a reply is over the limit
        with pytest.raises(ToolCallError) as failed:
            client.call_tool("echo", {"message": "x" * BIG})
        # Then that call fails saying the tool ran and its result was too large, and the session goes on
        assert "larger than knime-mcp reads in one message: the tool ran" in str(failed.value)
        assert "Ask the tool for less" in str(failed.value)
        assert "small" in client.call_tool("echo", {"message": "small"}).text
