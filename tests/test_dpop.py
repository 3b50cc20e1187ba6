"""DPoP-bound tokens (RFC 9449) from the real authorization server (npm `oidc-provider` with its DPoP feature, and
with server nonces) at a real MCP server that checks each proof as a resource server must
(tests/servers/dpop_mcp_server.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.keyed_oauth import JWT_CLIENT_ID, KeyedOAuth, keyed_oauth
from fixtures.npm_servers import NodePeers
from fixtures.oauth_servers import CLIENT_ID, CLIENT_SECRET, MCP_TOOLS, browser_visits
from knime_mcp import auth as oauth
from knime_mcp.config import AuthRef, ServerSpec
from knime_mcp.errors import ServerAuthError
from knime_mcp.mcp.client import McpClient

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("own_token_folder")]


@pytest.fixture(scope="module")
def dpop(npm_peers: NodePeers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedOAuth]:
    with keyed_oauth(npm_peers, tmp_path_factory.mktemp("dpop"), dpop="on") as running:
        yield running


@pytest.fixture(scope="module")
def dpop_nonce(npm_peers: NodePeers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedOAuth]:
    with keyed_oauth(npm_peers, tmp_path_factory.mktemp("dpop-nonce"), dpop="nonce") as running:
        yield running


def _secret_client(servers: KeyedOAuth, **auth: str) -> ServerSpec:
    ref = AuthRef(kind="oauth-client-credentials", credential="ci", scope="mcp:read", **auth)
    return ServerSpec(target=servers.mcp_url, auth=ref)


async def _tool_names(spec: ServerSpec, credentials: tuple[str, str] = (CLIENT_ID, CLIENT_SECRET)) -> list[str]:
    async with McpClient(spec, credentials=lambda name: credentials) as client:
        return [tool.name for tool in await client.list_tools()]


def _said(servers: KeyedOAuth, line: str) -> int:
    """How often the DPoP-checking MCP server printed ``line``."""
    return servers.mcp_log.read_text().count(line)


async def test_a_token_from_a_server_that_offers_dpop_is_bound_and_presented_with_a_proof(dpop: KeyedOAuth) -> None:
    # Given an authorization server whose metadata offers DPoP, and an MCP server that takes DPoP-bound tokens only
    accepted = _said(dpop, "dpop accepted nonce=no")
    # When knime-mcp connects with the client credentials grant
    names = await _tool_names(_secret_client(dpop))
    # Then the token is bound, and every request to the MCP server carried a proof the server accepted
    assert names == MCP_TOOLS and _said(dpop, "dpop accepted nonce=no") > accepted
    assert _said(dpop, "dpop refused") == 0


async def test_a_later_run_uses_the_bound_token_with_the_key_it_was_bound_to(dpop: KeyedOAuth) -> None:
    spec = _secret_client(dpop)
    await _tool_names(spec)
    store = oauth.spec_token_store(spec, lambda name: (CLIENT_ID, CLIENT_SECRET))
    first = json.loads(store.path.read_text())
    assert "BEGIN PRIVATE KEY" in first["dpop_key"]
    # When a second run connects, it presents the stored token with the stored key: no new token was needed
    assert await _tool_names(spec) == MCP_TOOLS
    assert json.loads(store.path.read_text())["tokens"] == first["tokens"]


async def test_dpop_switched_off_sends_a_bearer_token_which_a_dpop_only_server_refuses(dpop: KeyedOAuth) -> None:
    refused = _said(dpop, "dpop refused invalid_token")
    with pytest.raises(ServerAuthError):
        await _tool_names(_secret_client(dpop, dpop="off"))
    assert _said(dpop, "dpop refused invalid_token") > refused


@pytest.mark.parametrize("private_key", [False, True], ids=["client-secret", "private-key-jwt"])
async def test_nonces_the_authorization_server_and_the_mcp_server_ask_for_are_sent_on_a_second_try(
    dpop_nonce: KeyedOAuth, private_key: bool
) -> None:
    # Given servers that both demand a DPoP nonce (the token endpoint's 400, the MCP server's 401 use_dpop_nonce)
    asked = _said(dpop_nonce, "dpop refused use_dpop_nonce")
    # When knime-mcp connects, with its client secret or signing in with its private key (a fresh assertion each try)
    if private_key:
        spec = _secret_client(dpop_nonce, client_auth="private_key_jwt")
        names = await _tool_names(spec, (JWT_CLIENT_ID, dpop_nonce.keys["ES256"]))
    else:
        names = await _tool_names(_secret_client(dpop_nonce))
    # Then it got a bound token and the MCP server accepted proofs with its nonce, after asking once for it
    assert names == MCP_TOOLS and _said(dpop_nonce, "dpop accepted nonce=yes") > 0
    assert _said(dpop_nonce, "dpop refused use_dpop_nonce") == asked + 1


async def test_a_browser_sign_in_gets_bound_tokens_and_a_later_run_refreshes_them_with_the_same_key(
    dpop: KeyedOAuth, browser: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a person who signs in once at a server that offers DPoP
    spec = ServerSpec(target=dpop.mcp_url, auth=AuthRef(kind="oauth"))
    async with McpClient(spec, show_sign_in=lambda url: None) as client:
        assert [tool.name for tool in await client.list_tools()] == MCP_TOOLS
    store = oauth.token_store(dpop.mcp_url, oauth.OAuthClient())
    first = json.loads(store.path.read_text())
    # When a later run, where nobody can sign in, finds the access token about to expire
    monkeypatch.setattr(oauth.store, "REFRESH_MARGIN_SECONDS", 10**9)
    async with McpClient(spec) as client:
        assert [tool.name for tool in await client.list_tools()] == MCP_TOOLS
    # Then it refreshed the bound refresh token with the key it was bound to, and presented the new token with it
    later = json.loads(store.path.read_text())
    assert later["tokens"]["access_token"] != first["tokens"]["access_token"]
    assert later["dpop_key"] == first["dpop_key"] and len(browser_visits(browser)) == 1


def test_the_cli_binds_tokens_unless_told_not_to(
    dpop: KeyedOAuth, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from knime_mcp.cli.main import main

    monkeypatch.setenv("KNIME_MCP_TEST_CLIENT_SECRET", CLIENT_SECRET)
    grant = ["--auth", "oauth-client-credentials", "--client-id", CLIENT_ID, "--scope", "mcp:read"]
    grant += ["--client-secret", "${KNIME_MCP_TEST_CLIENT_SECRET}"]
    assert main(["tools", dpop.mcp_url, *grant]) == 0 and "echo" in capsys.readouterr().out
    refused = _said(dpop, "dpop refused invalid_token")
    assert main(["tools", dpop.mcp_url, *grant, "--no-dpop"]) != 0
    assert _said(dpop, "dpop refused invalid_token") > refused
