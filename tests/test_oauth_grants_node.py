"""The nodes' JWT bearer grants (workload identity, enterprise identity by ID-JAG), run through execute as KNIME runs
them, against tests/servers/jwt_bearer_server.py (Given/When/Then)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import node_host
from fixtures.jwt_bearer_servers import AS_CLIENT, CLIENT_SECRET, IDP_CLIENT, KEY, issuer_of, signed_jwt
from fixtures.python_servers import RunningServer
from knime_mcp.errors import ServerAuthError
from knime_mcp.tools.arrow import tools_from_frame
from node_contexts import ExecuteContext

pytestmark = pytest.mark.knime_node


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[object]:
    """An MCP Tool Provider with tokens in a folder of the test's own; KNIME's real API keeps a group's values on
    the class, so the authentication settings are cleared before (what other tests left) and after."""
    import extension

    monkeypatch.setenv("KNIME_MCP_OAUTH_DIR", str(tmp_path / "oauth"))
    node = extension.MCPToolProvider()
    _clear_authentication(node)
    yield node
    _clear_authentication(node)


def _clear_authentication(node: object) -> None:
    node_host.set_parameters(
        node,
        auth__kind="NONE",
        auth__credential="",
        auth__token_file="",
        auth__identity_assertion="",
        auth__idp_token_endpoint="",
        auth__idp_client_id="",
    )


def test_the_provider_lists_tools_with_the_workload_token_from_the_file_its_setting_names(
    provider: object, jwt_bearer_server: RunningServer, tmp_path: Path
) -> None:
    # Given an executor whose platform writes its identity token to a file
    token_file = tmp_path / "token"
    token_file.write_text(signed_jwt("hub-executor", issuer_of(jwt_bearer_server)))
    provider.server.server = jwt_bearer_server.url  # type: ignore[attr-defined]
    node_host.set_parameters(provider, auth__kind="OAUTH_WORKLOAD_IDENTITY", auth__token_file=str(token_file))
    # When the provider executes, then it lists the server's tools, and the table keeps the token file's setting
    (table,) = node_host.execute_node(provider, ExecuteContext({}))
    frame = table.to_pandas()
    assert list(frame["Name"]) == ["whoami"]
    assert tools_from_frame(frame)[0].server.auth.token_file == str(token_file)
    # And without the file, it fails naming it
    token_file.unlink()
    node_host.set_parameters(provider, auth__sign_in_again=True)
    with pytest.raises(ServerAuthError, match="does not exist"):
        node_host.execute_node(provider, ExecuteContext({}))
    node_host.set_parameters(provider, auth__sign_in_again=False)


def test_the_provider_signs_in_with_an_id_token_from_a_credential_through_the_identity_provider(
    provider: object, jwt_bearer_server: RunningServer
) -> None:
    # Given the person's ID token and the client's secret in KNIME credentials, and the identity provider's settings
    provider.server.server = jwt_bearer_server.url  # type: ignore[attr-defined]
    node_host.set_parameters(
        provider,
        auth__kind="OAUTH_ID_JAG",
        auth__credential="mcp-client",
        auth__identity_assertion="id-token",
        auth__idp_token_endpoint=f"{issuer_of(jwt_bearer_server)}/idp/token",
        auth__idp_client_id=IDP_CLIENT,
    )
    credentials = {"mcp-client": (AS_CLIENT, CLIENT_SECRET), "id-token": ("", signed_jwt("ada", IDP_CLIENT))}
    # When the provider executes, then it lists the server's tools, and the table holds no secret
    (table,) = node_host.execute_node(provider, ExecuteContext(credentials))
    frame = table.to_pandas()
    assert list(frame["Name"]) == ["whoami"]
    assert CLIENT_SECRET not in frame.to_string() and credentials["id-token"][1] not in frame.to_string()


def test_the_provider_masks_a_workload_token_the_authorization_server_quotes_back_in_its_error(
    provider: object, jwt_bearer_server: RunningServer, tmp_path: Path
) -> None:
    # Given a workload token the authorization server refuses (another platform signed it), quoting it back
    token_file = tmp_path / "token"
    token = signed_jwt("stranger", issuer_of(jwt_bearer_server), key="another-platform-" + KEY)
    token_file.write_text(token)
    provider.server.server = jwt_bearer_server.url  # type: ignore[attr-defined]
    node_host.set_parameters(provider, auth__kind="OAUTH_WORKLOAD_IDENTITY", auth__token_file=str(token_file))
    # When the provider executes, then its error says what was refused, without the token
    with pytest.raises(ServerAuthError, match=r"workload token \*\*\* not accepted") as failed:
        node_host.execute_node(provider, ExecuteContext({}))
    assert token.rsplit(".", 1)[1] not in f"{failed.value} {failed.value.hint}"
