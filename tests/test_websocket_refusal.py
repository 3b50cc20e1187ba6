"""MCP over WebSocket is refused where a server is given, saying why (no maintained client: the MCP Python SDK 2.x
dropped its own, and the specification's transports are stdio and Streamable HTTP) and what to use instead: in a
server address, a pasted configuration, the command line and the MCP Tool Provider node."""

from __future__ import annotations

import json

import knime.extension as knext
import pytest

import node_host
from cli_runs import run_cli
from knime_mcp.config import ServerSpec, parse_pasted
from knime_mcp.errors import ConfigError
from node_contexts import ConfigureContext
from test_provider_node import _provider

REASON = r"MCP over WebSocket \(ws:// and wss:// addresses\) is not supported: .*dropped its WebSocket client"


@pytest.mark.parametrize(
    ("address", "instead"), [("ws://127.0.0.1:8765/mcp", "an http:// URL"), ("WSS://mcp.example.com", "an https://")]
)
def test_a_websocket_server_address_is_refused_saying_why_and_what_to_use(address: str, instead: str) -> None:
    with pytest.raises(ConfigError, match=REASON) as raised:
        ServerSpec(target=address)
    assert "Streamable HTTP endpoint" in (raised.value.hint or "") and instead in (raised.value.hint or "")


@pytest.mark.parametrize(
    "entry", [{"url": "wss://mcp.example.com/ws"}, {"type": "websocket", "url": "https://mcp.example.com/ws"}]
)
def test_a_pasted_websocket_server_is_refused_naming_it(entry: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=f"Server 'live': {REASON}"):
        parse_pasted(json.dumps({"mcpServers": {"live": entry}}))


@pytest.mark.parametrize(
    "argv",
    [
        ["tools", "ws://127.0.0.1:9/mcp"],
        ["call", "wss://mcp.example.com/mcp", "echo"],
        ["tools", "--", "ws://127.0.0.1:9/mcp"],
        ["agent", "ws://127.0.0.1:9/mcp", "--model", "openai:gpt-4o-mini", "--prompt", "hi"],
    ],
)
def test_the_command_line_refuses_a_websocket_server_at_once(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, _, err = run_cli(capsys, *argv)
    assert code == 3 and "MCP over WebSocket" in err and "Streamable HTTP endpoint" in err


@pytest.mark.knime_node
def test_the_mcp_tool_provider_refuses_a_websocket_server_url_as_an_invalid_setting() -> None:
    with pytest.raises(knext.InvalidParametersError, match=REASON):
        node_host.configure_node(_provider("wss://mcp.example.com/mcp"), ConfigureContext())
