"""The client credentials grant with private_key_jwt client authentication (RFC 7523) against the real authorization
server (npm `oidc-provider`), which knows the client only by its public keys, guarding a real MCP server."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from fixtures.keyed_oauth import JWT_CLIENT_ID, KeyedOAuth, keyed_oauth
from fixtures.npm_servers import NodePeers
from fixtures.oauth_servers import MCP_TOOLS
from knime_mcp.auth.keys import signing_key
from knime_mcp.config import AuthRef, ServerSpec
from knime_mcp.errors import ConfigError, ServerAuthError
from knime_mcp.mcp.client import McpClient

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("own_token_folder")]


@pytest.fixture(scope="module")
def servers(npm_peers: NodePeers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedOAuth]:
    with keyed_oauth(npm_peers, tmp_path_factory.mktemp("jwt-client")) as running:
        yield running


def _spec(servers: KeyedOAuth, **auth: str) -> ServerSpec:
    ref = AuthRef(kind="oauth-client-credentials", client_auth="private_key_jwt", scope="mcp:read", **auth)
    return ServerSpec(target=servers.mcp_url, auth=ref)


async def _tool_names(spec: ServerSpec, **options: object) -> list[str]:
    async with McpClient(spec, **options) as client:  # type: ignore[arg-type]
        return [tool.name for tool in await client.list_tools()]


def _pem(key: ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey) -> str:
    encoding, pkcs8 = serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8
    return key.private_bytes(encoding, pkcs8, serialization.NoEncryption()).decode()


@pytest.mark.parametrize("algorithm", ["RS256", "ES256"])
async def test_a_private_key_in_a_knime_credential_gets_a_token_and_appears_nowhere(
    servers: KeyedOAuth, algorithm: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Given the client's RSA or P-256 key in a KNIME credential (user name: client id; password: the PEM)
    caplog.set_level(logging.DEBUG)
    pem = servers.keys[algorithm]
    # When knime-mcp connects with private_key_jwt
    names = await _tool_names(_spec(servers, credential="ci"), credentials=lambda name: (JWT_CLIENT_ID, pem))
    # Then the authorization server took the signed assertion, and the key is in no log
    assert names == MCP_TOOLS
    body = pem.splitlines()[1]
    assert body not in caplog.text and body not in servers.authorization_log.read_text()


async def test_a_private_key_file_named_by_an_environment_variable_signs_the_assertion(
    servers: KeyedOAuth, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key_file = tmp_path / "client.pem"
    key_file.write_text(servers.keys["ES256"])
    monkeypatch.setenv("KNIME_MCP_TEST_KEY", str(key_file))
    spec = _spec(servers, client_id=JWT_CLIENT_ID, secret="${KNIME_MCP_TEST_KEY}")
    assert await _tool_names(spec) == MCP_TOOLS


async def test_a_key_the_authorization_server_does_not_know_is_refused_as_invalid_client_without_the_key(
    servers: KeyedOAuth,
) -> None:
    stranger = _pem(ec.generate_private_key(ec.SECP256R1()))
    with pytest.raises(ServerAuthError) as failed:
        await _tool_names(_spec(servers, credential="ci"), credentials=lambda name: (JWT_CLIENT_ID, stranger))
    assert "invalid_client" in str(failed.value)
    assert stranger.splitlines()[1] not in f"{failed.value} {failed.value.hint}"


def test_the_algorithm_follows_the_key_and_other_keys_are_refused_without_quoting_them(tmp_path: Path) -> None:
    assert signing_key(_pem(ec.generate_private_key(ec.SECP256R1()))).algorithm == "ES256"
    for wrong in (_pem(ed25519.Ed25519PrivateKey.generate()), _pem(ec.generate_private_key(ec.SECP384R1()))):
        with pytest.raises(ConfigError, match="RS256 or ES256") as failed:
            signing_key(wrong)
        assert wrong.splitlines()[1] not in str(failed.value)
    for garbage in ("not-a-key-canary", str(tmp_path / "missing.pem"), "-----BEGIN PRIVATE KEY-----\ncanary\n"):
        with pytest.raises(ConfigError) as failed:
            signing_key(garbage)
        assert "canary" not in f"{failed.value} {failed.value.hint}"


def test_private_key_jwt_is_saved_only_when_chosen_and_goes_with_client_credentials_only() -> None:
    plain = ServerSpec(target="https://example.com/mcp", auth=AuthRef(kind="oauth-client-credentials", credential="c"))
    assert "client_auth" not in plain.to_json() and "dpop" not in plain.to_json()
    keyed = ServerSpec(
        target="https://example.com/mcp",
        auth=AuthRef(kind="oauth-client-credentials", credential="c", client_auth="private_key_jwt"),
    )
    assert ServerSpec.from_json(keyed.to_json()) == keyed and '"client_auth":"private_key_jwt"' in keyed.to_json()
    with pytest.raises(ConfigError, match="client credentials grant only"):
        AuthRef(kind="oauth", client_auth="private_key_jwt")


def test_the_cli_signs_in_with_a_private_key_from_the_environment_and_refuses_a_literal_one(
    servers: KeyedOAuth, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from knime_mcp.cli.main import main

    pem = servers.keys["RS256"]
    monkeypatch.setenv("KNIME_MCP_TEST_KEY", pem)
    grant = ["--auth", "oauth-client-credentials", "--client-id", JWT_CLIENT_ID, "--scope", "mcp:read"]
    assert main(["tools", servers.mcp_url, *grant, "--private-key", "${KNIME_MCP_TEST_KEY}"]) == 0
    listed = capsys.readouterr()
    assert "echo" in listed.out and pem.splitlines()[1] not in listed.out + listed.err
    assert main(["tools", servers.mcp_url, *grant, "--private-key", "/etc/client.pem"]) == 2
    assert "--private-key must be an environment reference" in capsys.readouterr().err
    secret = ["--client-secret", "${KNIME_MCP_TEST_KEY}", "--private-key", "${KNIME_MCP_TEST_KEY}"]
    assert main(["tools", servers.mcp_url, *grant, *secret]) == 2
    assert "instead of --client-secret" in capsys.readouterr().err
