"""The TLS follow-ups on KNIME's node API: the insecure warning kept beside a node's other warnings."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import node_host
from node_contexts import ExecuteContext
from test_tls import Pki, _encrypted_key, pki, tls_urls  # noqa: F401  (the CA and the HTTPS servers)
from test_tls_node import _DEFAULTS, _set_tls
from test_tls_node import provider as tls_provider  # noqa: F401  (its fixture, as a fixture of this module)

pytestmark = pytest.mark.knime_node


@pytest.fixture
def provider(tls_provider: Any) -> Iterator[Any]:  # noqa: F811
    """test_tls_node's MCP Tool Provider, with the settings these tests change put back too."""
    yield tls_provider
    tls_provider.pasted_config = ""
    node_host.set_parameters(tls_provider, selection__destructive="ALLOW")


def test_the_providers_notes_do_not_hide_the_insecure_warning(
    provider: Any,
    tls_urls: dict[str, str],  # noqa: F811
) -> None:
    # Given a server whose certificate is not checked, and a policy that leaves out tools with a note
    provider.server.server = tls_urls["wrong-name"]
    _set_tls(provider, **{**_DEFAULTS, "skip_verification": True})
    node_host.set_parameters(provider, selection__destructive="READ_ONLY")
    ctx = ExecuteContext()
    node_host.execute_node(provider, ctx)
    # Then the warning KNIME shows (the last one set) says both, the insecure connection first
    shown = ctx.warnings[-1]
    assert shown.startswith("Certificate verification is skipped for") and "delete_record" in shown


def _pasted(url: str) -> str:
    return json.dumps({"mcpServers": {"secure": {"url": url}}})


def test_the_tls_settings_apply_to_the_https_servers_of_a_pasted_configuration(
    provider: Any,
    tls_urls: dict[str, str],  # noqa: F811
    pki: Pki,  # noqa: F811
) -> None:
    # Given a pasted configuration whose server is under the company CA
    provider.pasted_config = _pasted(tls_urls["good"])
    # Then without the CA bundle its certificate is refused, with the setting that fixes it
    with pytest.raises(Exception, match="not issued by a trusted CA"):
        node_host.execute_node(provider, ExecuteContext())
    # And with the CA bundle set in the TLS settings, its tools are listed
    _set_tls(provider, **{**_DEFAULTS, "ca_bundle": str(pki.ca)})
    (table,) = node_host.execute_node(provider, ExecuteContext())
    assert "secure_echo" in set(table.to_pandas()["Name"])  # a pasted server's tools carry its key


def test_the_resource_reader_takes_the_tls_settings_for_its_pasted_server(
    tls_urls: dict[str, str],  # noqa: F811
    pki: Pki,  # noqa: F811
) -> None:
    import extension

    reader = extension.MCPResourceReader()
    reader.pasted_config = _pasted(tls_urls["good"])
    node_host.set_parameters(reader, auth__credential="", auth__issuer="", auth__sign_in_again=False)
    _set_tls(reader, **{**_DEFAULTS, "ca_bundle": str(pki.ca)})
    try:
        listing, _ = node_host.execute_node(reader, ExecuteContext(), None)
        assert len(listing.to_pandas()) > 0
    finally:
        _set_tls(reader, **_DEFAULTS)
        reader.pasted_config = ""


def test_an_encrypted_client_key_is_unlocked_by_the_password_of_a_knime_credential(
    provider: Any,
    tls_urls: dict[str, str],  # noqa: F811
    pki: Pki,  # noqa: F811
) -> None:
    # Given a server that requires a client certificate, whose key is encrypted with a passphrase in a credential
    key = _encrypted_key(pki, "correct-horse-5e1f")
    provider.server.server = tls_urls["client-cert"]
    settings = {"ca_bundle": str(pki.ca), "client_cert": str(pki.client_cert), "client_key": str(key)}
    _set_tls(provider, **{**_DEFAULTS, **settings, "key_credential": "client-key"})
    # When the provider runs with the credential's password, then it lists the server's tools
    ctx = ExecuteContext(credentials={"client-key": ("", "correct-horse-5e1f")})
    (table,) = node_host.execute_node(provider, ctx)
    assert "echo" in set(table.to_pandas()["Name"])
    # And with a wrong password it fails, saying so without the password
    with pytest.raises(Exception, match="passphrase is missing or wrong") as failed:
        node_host.execute_node(provider, ExecuteContext(credentials={"client-key": ("", "wrong-pass-93ad")}))
    assert "wrong-pass-93ad" not in str(failed.value) and "correct-horse" not in str(failed.value)
