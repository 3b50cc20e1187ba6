"""The TLS settings of the MCP Tool Provider against the HTTPS test server of tests/test_tls.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import node_host
from knime_mcp.tools.arrow import tools_from_frame
from node_contexts import ExecuteContext
from test_tls import Pki, pki, tls_urls  # noqa: F401  (the CA and the HTTPS servers)

pytestmark = pytest.mark.knime_node

_DEFAULTS = {
    "ca_bundle": "", "system_trust": False, "client_cert": "", "client_key": "", "key_credential": "",
    "skip_verification": False,
}  # fmt: skip


@pytest.fixture
def provider() -> Iterator[Any]:
    """An MCP Tool Provider whose TLS settings are put back afterwards: KNIME's real API keeps them on the class."""
    import extension

    node = extension.MCPToolProvider()
    node.pasted_config = ""
    node_host.set_parameters(node, auth__credential="", auth__issuer="", auth__sign_in_again=False)
    yield node
    _set_tls(node, **_DEFAULTS)


def _set_tls(node: Any, **settings: object) -> None:
    tls = node.server.tls
    for name, value in settings.items():
        setattr(tls, name, value)


def test_the_provider_lists_an_https_server_with_the_ca_bundle_setting(
    provider: Any,
    tls_urls: dict[str, str],  # noqa: F811
    pki: Pki,  # noqa: F811
) -> None:
    provider.server.server = tls_urls["good"]
    _set_tls(provider, **{**_DEFAULTS, "ca_bundle": str(pki.ca)})
    ctx = ExecuteContext()
    (table,) = node_host.execute_node(provider, ctx)
    tools = tools_from_frame(table.to_pandas())
    echo = next(tool for tool in tools if tool.name == "echo")
    assert echo.server.tls.ca_bundle == str(pki.ca) and not ctx.warnings


def test_skipping_verification_in_the_provider_warns_on_the_node(
    provider: Any,
    tls_urls: dict[str, str],  # noqa: F811
) -> None:
    provider.server.server = tls_urls["wrong-name"]
    _set_tls(provider, **{**_DEFAULTS, "skip_verification": True})
    ctx = ExecuteContext()
    (table,) = node_host.execute_node(provider, ctx)
    assert "echo" in set(table.to_pandas()["Name"])
    assert any("Certificate verification is skipped" in warning for warning in ctx.warnings)
