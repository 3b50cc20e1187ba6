"""The MCP Tool Provider's *Server from the catalog*: a preset, or an MCP Registry server at a pinned version (from
the stand-in registry, `registry_url`), set up and listed end to end, as KNIME runs the node (Given/When/Then).

The packages run offline: npx resolves `name@version` to the copy installed in tests/peers, the folder the test runs
in; the registry's remote entry points at the demo server."""

from __future__ import annotations

import knime.extension as knext
import pytest

import node_host
from fixtures.npm_servers import PEERS_DIR, NodePeers
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.arrow import tools_from_frame
from node_contexts import ConfigureContext, ExecuteContext

pytestmark = pytest.mark.knime_node

EVERYTHING = "npx -y @modelcontextprotocol/server-everything@2026.8.31"


def _provider(**settings: object):  # type: ignore[no-untyped-def]
    import extension

    node = extension.MCPToolProvider()
    node.pasted_config = ""
    defaults = {
        "server__server": "", "server__environment": "", "server__headers": "",
        "auth__credential": "", "auth__issuer": "", "auth__browser_sign_in": True, "auth__sign_in_again": False,
        "catalog__name": "", "catalog__version": "",
    }  # fmt: skip
    return node_host.set_parameters(node, **{**defaults, **settings})


def _listed(node, ctx: ExecuteContext | None = None) -> list:  # type: ignore[no-untyped-def]
    (table,) = node_host.execute_node(node, ctx or ExecuteContext())
    return tools_from_frame(table.to_pandas())


def test_a_preset_is_set_up_pinned_and_its_tools_listed(npm_peers: NodePeers, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the preset "everything" chosen in the dialog, and no server typed in
    monkeypatch.chdir(PEERS_DIR)
    node = _provider(catalog__source="PRESET", catalog__preset="everything")
    # When the node is configured and executed
    node_host.configure_node(node, ConfigureContext())
    tools = _listed(node)
    # Then the preset's pinned package is the server, and a person chose it: its tools are sealed
    echo = next(tool for tool in tools if tool.name == "echo")
    assert echo.server.target == EVERYTHING and is_sealed_here(echo.server)


def test_a_registry_server_is_read_at_its_version_and_its_tools_listed(
    npm_peers: NodePeers, registry_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(PEERS_DIR)
    node = _provider(
        catalog__source="REGISTRY", catalog__name="io.modelcontextprotocol/everything",
        catalog__version="2026.8.31", catalog__registry_url=registry_url,
    )  # fmt: skip
    tools = _listed(node)
    assert {tool.name for tool in tools} >= {"echo", "get-sum"} and tools[0].server.target == EVERYTHING


def test_a_registry_remote_takes_its_secret_header_from_the_header_settings(
    registry_url: str, demo_http_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEMO_KEY", "demo-key-value-0123456789")
    node = _provider(
        catalog__source="REGISTRY", catalog__name="io.github.knime-mcp-tests/demo", catalog__version="2.0.0",
        catalog__registry_url=registry_url, server__headers="X-API-Key: ${DEMO_KEY}",
    )  # fmt: skip
    tools = _listed(node)
    create_order = next(tool for tool in tools if tool.name == "create_order")
    assert create_order.server.target == demo_http_url
    assert dict(create_order.server.headers) == {"X-API-Key": "${DEMO_KEY}"}


def test_a_missing_input_is_named_with_the_setting_to_enter_it_in() -> None:
    node = _provider(catalog__source="PRESET", catalog__preset="github")
    with pytest.raises(knext.InvalidParametersError) as refused:
        node_host.configure_node(node, ConfigureContext())
    said = str(refused.value)
    assert "needs GITHUB_PERSONAL_ACCESS_TOKEN (environment variable, secret; in 'Environment (stdio)')" in said
    assert "${input:CREDENTIAL}" in said
    filled = _provider(
        catalog__source="PRESET", catalog__preset="github",
        server__environment="GITHUB_PERSONAL_ACCESS_TOKEN=${input:github}",
    )  # fmt: skip
    node_host.configure_node(filled, ConfigureContext())


def test_a_registry_server_without_its_version_is_an_invalid_setting() -> None:
    node = _provider(catalog__source="REGISTRY", catalog__name="io.github.user/weather")
    with pytest.raises(knext.InvalidParametersError, match="needs its name and its version"):
        node_host.configure_node(node, ConfigureContext())


def test_a_registry_server_named_by_a_flow_variable_does_not_run_its_package(registry_url: str) -> None:
    # Given a registry server whose name a flow variable set (data, not a person's choice)
    ctx = ExecuteContext()
    ctx.flow_variables["server_name"] = "io.modelcontextprotocol/everything"
    node = _provider(
        catalog__source="REGISTRY", catalog__name="io.modelcontextprotocol/everything",
        catalog__version="2026.8.31", catalog__registry_url=registry_url,
    )  # fmt: skip
    # When it executes, Then the package command is refused, naming the flow variable and the way out
    with pytest.raises(knext.InvalidParametersError) as refused:
        node_host.execute_node(node, ctx)
    said = str(refused.value)
    assert "command line taken from data was refused" in said and "flow variable 'server_name'" in said
