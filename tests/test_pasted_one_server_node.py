"""The MCP Resource Reader and the MCP Prompt node with a pasted MCP configuration (Given/When/Then, on both hosts):
they work on one server, the one the *Server key* names, or the configuration's only one; the demo server over stdio
and the npm server-everything over HTTP tell which one answered."""

from __future__ import annotations

import json
from typing import Any

import knime.extension as knext
import pytest

import node_host
from node_contexts import ConfigureContext, ExecuteContext

pytestmark = pytest.mark.knime_node


def _node(kind: str, pasted: str, key: str = "") -> Any:
    """A Resource Reader or Prompt node with ``pasted`` and ``key``; its server setting points nowhere, so only the
    configuration can have been used."""
    from nodes.prompt import MCPPrompt
    from nodes.resource_reader import MCPResourceReader

    node = MCPPrompt() if kind == "prompt" else MCPResourceReader()
    node.server.server = "http://nonexistent.invalid/mcp"
    node.pasted_config = pasted
    node.server_key = key
    defaults = (
        {"prompt__name": "", "prompt__arguments": "", "prompt__on_error": "FAIL"}
        if kind == "prompt"
        else {"contents__read": "NONE", "contents__uri_column": None, "contents__template": ""}
    )
    return node_host.set_parameters(node, **defaults)


def _listed(kind: str, node: Any, ctx: ExecuteContext | None = None) -> set[str]:
    """The names of the prompts, or the URIs of the resources, the node lists."""
    listing, _ = node_host.execute_node(node, ctx or ExecuteContext(), None)
    return set(listing.to_pandas()["Name" if kind == "prompt" else "URI"])


@pytest.fixture
def two_servers(demo_stdio_command: list[str], everything_http_url: str) -> str:
    command, *args = demo_stdio_command
    servers = {"demo": {"command": command, "args": args}, "everything": {"type": "http", "url": everything_http_url}}
    return json.dumps({"mcpServers": servers})


@pytest.mark.parametrize(("kind", "demo_only", "everything_only"), [
    ("prompt", "review_chart", "args-prompt"),
    ("reader", "demo://chart/{+values}", "demo://resource/dynamic/text/{resourceId}"),
])  # fmt: skip
def test_the_server_key_picks_the_server_of_a_pasted_configuration(
    two_servers: str, kind: str, demo_only: str, everything_only: str
) -> None:
    # Given a pasted configuration of the demo server and server-everything
    for key, shown, absent in (("demo", demo_only, everything_only), ("everything", everything_only, demo_only)):
        # When the node runs with the server key of one of them
        node = _node(kind, two_servers, key)
        node_host.configure_node(node, ConfigureContext(), None)
        listed = _listed(kind, node)
        # Then it lists that server's prompts or resources, not the other's
        assert shown in listed and absent not in listed


@pytest.mark.parametrize("kind", ["prompt", "reader"])
def test_an_empty_key_takes_the_only_server(demo_stdio_command: list[str], kind: str) -> None:
    command, *args = demo_stdio_command
    pasted = json.dumps({"servers": {"local": {"command": command, "args": args}}})
    assert ("review_chart" if kind == "prompt" else "demo://chart/{+values}") in _listed(kind, _node(kind, pasted))


@pytest.mark.parametrize("kind", ["prompt", "reader"])
@pytest.mark.parametrize(("key", "said"), [("", "describes 2 servers"), ("nope", "no server 'nope'")])
def test_a_key_that_picks_no_server_is_an_invalid_setting_listing_the_keys(
    two_servers: str, kind: str, key: str, said: str
) -> None:
    with pytest.raises(knext.InvalidParametersError, match=said) as raised:
        node_host.configure_node(_node(kind, two_servers, key), ConfigureContext(), None)
    assert "'demo'" in str(raised.value) and "'everything'" in str(raised.value)


@pytest.mark.parametrize("kind", ["prompt", "reader"])
def test_a_pasted_configuration_from_a_flow_variable_is_data(demo_stdio_command: list[str], kind: str) -> None:
    # Given a pasted stdio configuration that a flow variable set
    command, *args = demo_stdio_command
    pasted = json.dumps({"servers": {"local": {"command": command, "args": args}}})
    ctx = ExecuteContext()
    ctx.flow_variables["mcp_config"] = pasted
    # When the node executes, Then its stdio server does not start, and the error names the flow variable
    with pytest.raises(knext.InvalidParametersError, match="mcp_config"):
        node_host.execute_node(_node(kind, pasted), ctx, None)


def test_a_stdio_servers_environment_input_is_the_knime_credentials_password() -> None:
    import hashlib
    import sys

    from fixtures.python_servers import SERVERS_DIR

    # Given a pasted stdio server whose API_TOKEN is the VS Code input 'tok', and a KNIME credential of that name
    secret = "env-node-canary-51fa"
    server = {"command": sys.executable, "args": [str(SERVERS_DIR / "env_echo_server.py")]}
    pasted = json.dumps(
        {"servers": {"echo": {**server, "env": {"API_TOKEN": "${input:tok}"}}}, "inputs": [{"id": "tok"}]}
    )
    node = node_host.set_parameters(_node("reader", pasted), contents__read="LISTED")
    # When the Resource Reader reads the server's resource that tells what API_TOKEN holds
    _, contents = node_host.execute_node(node, ExecuteContext(credentials={"tok": ("", secret)}), None)
    # Then the server had the credential's password, and the password is in no output
    frame = contents.to_pandas()
    assert list(frame["Text"]) == [hashlib.sha256(secret.encode()).hexdigest()]
    assert secret not in frame.to_csv()


def _credential_config(demo_stdio_command: list[str]) -> str:
    """The demo server over stdio, whose environment entry takes the KNIME credential 'tok' as the input 'tok'."""
    command, *args = demo_stdio_command
    server = {"command": command, "args": args, "env": {"API_TOKEN": "${input:tok}"}}
    return json.dumps({"servers": {"local": server}, "inputs": [{"id": "tok"}]})


@pytest.mark.parametrize("kind", ["provider", "prompt", "reader"])
def test_configure_warns_which_knime_credentials_a_pasted_configuration_uses(
    demo_stdio_command: list[str], kind: str
) -> None:
    from nodes.tool_provider import MCPToolProvider

    pasted = _credential_config(demo_stdio_command)
    node = _node(kind, pasted) if kind != "provider" else MCPToolProvider()
    node.pasted_config = pasted
    ctx = ConfigureContext(credentials={"tok": ("", "secret-canary-93ab")})
    node_host.configure_node(node, ctx, *([] if kind == "provider" else [None]))
    assert any("'tok'" in warning and "credential" in warning for warning in ctx.warnings), ctx.warnings
    assert not any("secret-canary-93ab" in warning for warning in ctx.warnings)


@pytest.mark.parametrize("kind", ["prompt", "reader"])
@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
def test_a_pasted_configuration_from_a_flow_variable_may_not_bind_a_knime_credential(
    demo_stdio_command: list[str], kind: str, trusted: bool
) -> None:
    # Given a pasted configuration set by a flow variable that names the KNIME credential 'tok'
    pasted = _credential_config(demo_stdio_command)
    node = _node(kind, pasted)
    ctx = ConfigureContext(credentials={"tok": ("", "secret-canary-93ab")})
    ctx.flow_variables["mcp_config"] = pasted
    node.server.trust_flow_variable = trusted
    try:
        if trusted:
            # Then with 'Trust a server address from a flow variable' on, it may
            node_host.configure_node(node, ctx, None)
            return
        # When the node is configured, Then the input is refused, naming the flow variable and the setting to trust it
        with pytest.raises(knext.InvalidParametersError, match="'tok'") as raised:
            node_host.configure_node(node, ctx, None)
    finally:
        node.server.trust_flow_variable = False  # KNIME's real API keeps it on the class
    message = str(raised.value)
    assert "mcp_config" in message and "Trust a server address from a flow variable" in message
