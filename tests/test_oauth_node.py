"""The nodes' *Authorization server (issuer)* setting, run through execute as KNIME runs it (Given/When/Then)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import node_host
from fixtures.oauth_servers import CLIENT_ID, CLIENT_SECRET, MCP_TOOLS, OAuthServers, browser_visits
from knime_mcp.errors import ServerAuthError
from knime_mcp.tools.arrow import tools_from_frame
from node_contexts import ExecuteContext

pytestmark = pytest.mark.knime_node


@pytest.fixture
def provider() -> Iterator[object]:
    """An MCP Tool Provider with the client credentials grant; KNIME's real API keeps a group's values on the class,
    so the issuer a test sets is cleared afterwards."""
    import extension

    node = extension.MCPToolProvider()
    node_host.set_parameters(
        node,
        auth__kind="OAUTH_CLIENT_CREDENTIALS",
        auth__credential="ci",
        auth__browser_sign_in=True,
        auth__sign_in_again=False,
    )
    yield node
    node_host.set_parameters(node, auth__issuer="", auth__credential="", auth__kind="NONE")


def test_the_provider_gets_a_token_only_from_the_issuer_its_settings_name(
    provider: object, oauth_servers: OAuthServers, browser: Path
) -> None:
    # Given a provider whose issuer setting names another authorization server than the MCP server does
    provider.server.server = oauth_servers.http_url  # type: ignore[attr-defined]
    node_host.set_parameters(provider, auth__issuer="http://127.0.0.1:9")
    ctx = ExecuteContext({"ci": (CLIENT_ID, CLIENT_SECRET)})
    # When it executes, then it fails saying which issuer the server names and which one is set
    with pytest.raises(ServerAuthError, match="not the issuer set in the OAuth settings") as failed:
        node_host.execute_node(provider, ctx)
    assert oauth_servers.issuer in str(failed.value) and CLIENT_SECRET not in str(failed.value)
    # And with the issuer the MCP server names, it lists the tools, and the table carries the issuer
    node_host.set_parameters(provider, auth__issuer=f" {oauth_servers.issuer} ")
    (table,) = node_host.execute_node(provider, ExecuteContext({"ci": (CLIENT_ID, CLIENT_SECRET)}))
    frame = table.to_pandas()
    assert list(frame["Name"]) == MCP_TOOLS and not browser_visits(browser)
    assert tools_from_frame(frame)[0].server.auth.issuer == oauth_servers.issuer
