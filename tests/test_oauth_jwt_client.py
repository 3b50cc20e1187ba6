"""The client credentials grant with private_key_jwt client authentication (RFC 7523) against the real authorization
server (npm `oidc-provider`), which knows the client only by its public keys, guarding a real MCP server."""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

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


def _pem(key: ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey | rsa.RSAPrivateKey) -> str:
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


async def test_the_assertion_is_signed_with_an_algorithm_the_authorization_server_lists(
    npm_peers: NodePeers, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Given an authorization server that takes client assertions signed with PS256 or ES256 only (its metadata says)
    with keyed_oauth(npm_peers, tmp_path_factory.mktemp("ps256"), client_auth_algs="PS256,ES256") as strict:
        # When knime-mcp signs in with the client's RSA key, then it signs with PS256, which the server takes
        pem = strict.keys["RS256"]
        names = await _tool_names(_spec(strict, credential="ci"), credentials=lambda name: (JWT_CLIENT_ID, pem))
    assert names == MCP_TOOLS


async def test_the_assertion_names_its_key_by_the_rfc_7638_thumbprint(own_token_folder: Path) -> None:
    from mcp.shared.auth import OAuthMetadata

    from knime_mcp.auth.keys import thumbprint
    from knime_mcp.auth.private_key_jwt import private_key_jwt_flow
    from knime_mcp.auth.store import TokenStore

    # RFC 7638 3.1's example key has this thumbprint
    example = {"kty": "RSA", "e": "AQAB", "n": RFC_7638_MODULUS}
    assert thumbprint(example) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
    # And the assertion's header names the client's key by it, with the algorithm the metadata lists
    key = rsa.generate_private_key(65537, 2048)
    store = TokenStore.for_server("https://mcp.example.com/mcp", client="c")
    flow = private_key_jwt_flow("https://mcp.example.com/mcp", store, client_id="c", key=_pem(key), scope=None,
                                issuer=None, server="s")  # fmt: skip
    flow.context.oauth_metadata = OAuthMetadata.model_validate(
        {"issuer": "https://as.example.com", "authorization_endpoint": "https://as.example.com/a",
         "token_endpoint": "https://as.example.com/t", "token_endpoint_auth_signing_alg_values_supported": ["PS384"]}
    )  # fmt: skip
    data: dict[str, str] = {}
    await flow._add_client_authentication_jwt(token_data=data)  # type: ignore[attr-defined]
    header = jwt.get_unverified_header(data["client_assertion"])
    numbers = key.public_key().public_numbers()
    own = {"kty": "RSA", "e": _b64_int(numbers.e), "n": _b64_int(numbers.n)}
    assert header["kid"] == thumbprint(own) and header["alg"] == "PS384"


RFC_7638_MODULUS = (
    "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMs"
    "tn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1"
    "n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
)


def _b64_int(value: int) -> str:
    return base64.urlsafe_b64encode(value.to_bytes((value.bit_length() + 7) // 8, "big")).rstrip(b"=").decode()
