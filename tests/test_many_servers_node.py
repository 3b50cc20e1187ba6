"""The MCP Tool Provider with a pasted configuration of several servers (Given/When/Then, on both hosts): the servers
are listed at once, one that fails is left out and named in the node's warning with its reason, and *Fail if any
server fails* or every server failing fails the node."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

import node_host
from fixtures.python_servers import SERVERS_DIR
from knime_mcp.errors import ServerConnectError
from knime_mcp.tools.arrow import tools_from_frame
from node_contexts import ExecuteContext

pytestmark = pytest.mark.knime_node

LEFT_OUT = "server(s) left out (turn on 'Fail if any server fails' to fail instead): "


def closed_port_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens: a port just bound and closed again."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/mcp"


def _provider(servers: dict[str, object], **settings: object):  # type: ignore[no-untyped-def]
    import extension

    node = extension.MCPToolProvider()
    node.server.server = ""
    node.pasted_config = json.dumps({"mcpServers": servers})
    node.fail_on_server_failure = settings.pop("fail_on_server_failure", False)
    return node_host.set_parameters(node, auth__credential="", auth__browser_sign_in=True, **settings)


@pytest.fixture
def mixed(demo_stdio_command: list[str], auth_server_url: str) -> dict[str, object]:
    """The demo server over stdio, a server with nothing listening, and one that wants a token it is not sent."""
    command, *args = demo_stdio_command
    return {
        "local": {"command": command, "args": args},
        "down": {"type": "http", "url": closed_port_url()},
        "locked": {"type": "http", "url": auth_server_url},
    }


def test_the_servers_of_a_pasted_configuration_are_listed_at_once(tmp_path: Path) -> None:
    # Given three servers whose tool lists answer only once all three are being listed together
    script = str(SERVERS_DIR / "gathering_list_server.py")
    servers = {
        name: {"command": sys.executable, "args": [script, "--folder", str(tmp_path), "--count", "3", "--name", name]}
        for name in ("a", "b", "c")
    }
    ctx = ExecuteContext()
    # When the provider lists them
    (table,) = node_host.execute_node(_provider(servers), ctx)
    # Then each answered, in the configuration's order, and the progress counted the servers done
    assert [tool.name for tool in tools_from_frame(table.to_pandas())] == ["a_a_here", "b_b_here", "c_c_here"]
    assert not ctx.warnings and ctx.progress[-1] == (1.0, "Listed 3 of 3 servers")


def test_failing_servers_are_left_out_and_named_in_the_warning_with_their_reasons(mixed: dict[str, object]) -> None:
    ctx = ExecuteContext()
    (table,) = node_host.execute_node(_provider(mixed), ctx)
    assert {tool.name.split("_", 1)[0] for tool in tools_from_frame(table.to_pandas())} == {"local"}
    (warning,) = [text for text in ctx.warnings if LEFT_OUT in text]
    down, locked = warning.split(f"2 {LEFT_OUT}", 1)[1].split(" | ")[:2]
    assert down.startswith("down: Could not connect") and "Hint: Check that the server is running" in down
    assert locked.startswith("locked: The server refused the credentials (HTTP 401).")
    assert "Set the authentication (bearer token, header or basic)" in locked


def test_fail_if_any_server_fails_fails_the_node_naming_the_server(mixed: dict[str, object]) -> None:
    with pytest.raises(ServerConnectError, match=r"\[server: (down|locked)\]"):
        node_host.execute_node(_provider(mixed, fail_on_server_failure=True), ExecuteContext())


def test_the_node_fails_when_every_server_fails_naming_each() -> None:
    servers = {"one": {"url": closed_port_url()}, "two": {"url": closed_port_url()}}
    with pytest.raises(ServerConnectError, match=r"^None of the 2 servers listed its tools\. one: Could not") as caught:
        node_host.execute_node(_provider(servers), ExecuteContext())
    assert " | two: Could not connect" in str(caught.value)
