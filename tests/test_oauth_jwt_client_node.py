"""The nodes' *Sign in with a private key (private_key_jwt)* setting, run through execute as KNIME runs it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import node_host
from fixtures.keyed_oauth import JWT_CLIENT_ID, KeyedOAuth, keyed_oauth
from fixtures.npm_servers import NodePeers
from fixtures.oauth_servers import MCP_TOOLS
from knime_mcp.tools.arrow import tools_from_frame
from node_contexts import ExecuteContext

pytestmark = pytest.mark.knime_node


@pytest.fixture(scope="module")
def servers(npm_peers: NodePeers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedOAuth]:
    with keyed_oauth(npm_peers, tmp_path_factory.mktemp("jwt-client-node")) as running:
        yield running


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """An MCP Tool Provider with the client credentials grant and a private key; KNIME's real API keeps a group's
    values on the class, so they are reset afterwards."""
    import extension

    monkeypatch.setenv("KNIME_MCP_OAUTH_DIR", str(tmp_path_factory.mktemp("oauth")))
    node = extension.MCPToolProvider()
    node_host.set_parameters(
        node, auth__kind="OAUTH_CLIENT_CREDENTIALS", auth__credential="ci", auth__private_key_jwt=True, auth__scope=""
    )
    yield node
    node_host.set_parameters(node, auth__private_key_jwt=False, auth__credential="", auth__kind="NONE")


def test_the_provider_signs_in_with_the_private_key_in_its_credential(provider: object, servers: KeyedOAuth) -> None:
    # Given a provider whose credential holds the client id and its P-256 private key
    provider.server.server = servers.mcp_url  # type: ignore[attr-defined]
    pem = servers.keys["ES256"]
    # When it executes, then it lists the tools, and the table says private_key_jwt but holds no key
    (table,) = node_host.execute_node(provider, ExecuteContext({"ci": (JWT_CLIENT_ID, pem)}))
    frame = table.to_pandas()
    assert list(frame["Name"]) == MCP_TOOLS
    assert tools_from_frame(frame)[0].server.auth.client_auth == "private_key_jwt"
    assert pem.splitlines()[1] not in frame.to_json()
