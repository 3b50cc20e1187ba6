"""The nodes' *Bind tokens with DPoP* setting, run through execute as KNIME runs it, against the real authorization
server with DPoP and an MCP server that takes DPoP-bound tokens only."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import node_host
from fixtures.keyed_oauth import KeyedOAuth, keyed_oauth
from fixtures.npm_servers import NodePeers
from fixtures.oauth_servers import CLIENT_ID, CLIENT_SECRET, MCP_TOOLS
from knime_mcp.errors import ServerAuthError
from node_contexts import ExecuteContext

pytestmark = pytest.mark.knime_node


@pytest.fixture(scope="module")
def servers(npm_peers: NodePeers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedOAuth]:
    with keyed_oauth(npm_peers, tmp_path_factory.mktemp("dpop-node"), dpop="on") as running:
        yield running


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """An MCP Tool Provider with the client credentials grant; KNIME's real API keeps a group's values on the class,
    so they are reset afterwards."""
    import extension

    monkeypatch.setenv("KNIME_MCP_OAUTH_DIR", str(tmp_path_factory.mktemp("oauth")))
    node = extension.MCPToolProvider()
    node_host.set_parameters(node, auth__kind="OAUTH_CLIENT_CREDENTIALS", auth__credential="ci", auth__scope="mcp:read")
    yield node
    node_host.set_parameters(node, auth__dpop=True, auth__credential="", auth__scope="", auth__kind="NONE")


def test_the_provider_binds_tokens_with_dpop_unless_switched_off(provider: object, servers: KeyedOAuth) -> None:
    provider.server.server = servers.mcp_url  # type: ignore[attr-defined]
    # By default the token is bound, and the DPoP-only MCP server lists its tools
    (table,) = node_host.execute_node(provider, ExecuteContext({"ci": (CLIENT_ID, CLIENT_SECRET)}))
    assert list(table.to_pandas()["Name"]) == MCP_TOOLS
    # Switched off, a Bearer token goes, which that server refuses
    node_host.set_parameters(provider, auth__dpop=False)
    with pytest.raises(ServerAuthError):
        node_host.execute_node(provider, ExecuteContext({"ci": (CLIENT_ID, CLIENT_SECRET)}))
