"""The unattended grants (workload identity, ID-JAG, client credentials) against hostile and careless servers of the
project's own on loopback (tests/servers/jwt_bearer_server.py): refusals that quote the assertion back, an MCP server
that names an authorization server elsewhere, discovery that leads from a public server to this machine.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path

import pytest

from fixtures.jwt_bearer_servers import AS_CLIENT, CLIENT_SECRET, IDP_CLIENT, issuer_of, said, signed_jwt
from fixtures.python_servers import RunningServer
from knime_mcp.config import AuthRef, ServerSpec
from knime_mcp.errors import ConfigError, ServerAuthError
from knime_mcp.net import urlguard
from knime_mcp.net.urlguard import check_discovery
from test_oauth_grants import _credentials, _id_jag, _token_requests, _whoami, _workload

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("own_token_folder")]


def _shown(error: ServerAuthError) -> str:
    return f"{error} {error.hint}"


async def test_an_id_token_the_identity_provider_quotes_back_is_masked(jwt_bearer_server: RunningServer) -> None:
    expired = signed_jwt("ada@example.com", IDP_CLIENT, expires_in=-60)
    with pytest.raises(ServerAuthError) as failed:
        await _whoami(_id_jag(jwt_bearer_server), credentials=_credentials(expired))
    assert "ID token *** not accepted" in str(failed.value) and expired.rsplit(".", 1)[1] not in _shown(failed.value)


async def test_an_id_jag_the_authorization_server_quotes_back_is_masked(jwt_bearer_server: RunningServer) -> None:
    # Given a wrong client secret: the authorization server refuses the ID-JAG it was given, quoting it
    id_token = signed_jwt("ada@example.com", IDP_CLIENT)
    with pytest.raises(ServerAuthError) as failed:
        await _whoami(_id_jag(jwt_bearer_server), credentials=_credentials(id_token, client_secret="wrong-canary-71"))
    # Then the message says which, and holds no JWT (the ID-JAG is one)
    assert "client authentication failed for the ID-JAG ***" in str(failed.value)
    assert "eyJ" not in _shown(failed.value)


def test_the_cli_masks_an_identity_assertion_the_identity_provider_quotes_back(
    jwt_bearer_server: RunningServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from knime_mcp.cli.main import main

    expired = signed_jwt("ada@example.com", IDP_CLIENT, expires_in=-60)
    monkeypatch.setenv("ID_TOKEN", expired)
    grant = [
        "--auth", "oauth-id-jag", "--client-id", "knime-mcp-xaa", "--identity-assertion", "${ID_TOKEN}",
        "--idp-token-endpoint", f"{issuer_of(jwt_bearer_server)}/idp/token", "--idp-client-id", IDP_CLIENT,
    ]  # fmt: skip
    assert main(["tools", jwt_bearer_server.url, *grant]) != 0
    said = capsys.readouterr()
    assert "ID token *** not accepted" in said.err and expired.rsplit(".", 1)[1] not in said.out + said.err


def test_every_secret_a_jwt_bearer_grant_sends_is_masked_in_what_the_session_relays(
    jwt_bearer_server: RunningServer,
) -> None:
    from knime_mcp.auth import ServerOAuth
    from knime_mcp.net.http_pool import HttpPool

    # Given an ID-JAG grant with the ID token, the client secret and the identity provider's secret in credentials
    id_token = signed_jwt("ada@example.com", IDP_CLIENT)
    spec = _id_jag(jwt_bearer_server, idp_secret="idp-secret")
    known = {"mcp-client": (AS_CLIENT, "as-canary"), "id-token": ("", id_token), "idp-secret": ("", "idp-canary")}
    # Then the session masks each of them in what the server relays (the tokens it gets later join them)
    oauth = ServerOAuth(spec, known.__getitem__, None, pool=HttpPool())
    assert {id_token, "as-canary", "idp-canary"} <= oauth.secrets


def _client_credentials(server: RunningServer, **settings: str) -> ServerSpec:
    auth = AuthRef(kind="oauth-client-credentials", credential="ci", **settings)  # type: ignore[arg-type]
    return ServerSpec(target=server.url, auth=auth)


def _client(_: str) -> tuple[str, str]:
    return AS_CLIENT, CLIENT_SECRET


@pytest.mark.parametrize("grant", ["workload-identity", "client-credentials"])
async def test_without_an_issuer_nothing_secret_goes_to_an_authorization_server_on_another_host(
    authorization_server_elsewhere: RunningServer, tmp_path: Path, grant: str
) -> None:
    # Given an MCP server that names an authorization server on another host, and no issuer set
    server = authorization_server_elsewhere
    elsewhere = issuer_of(server).replace("127.0.0.1", "localhost")
    token_file = tmp_path / "token"
    token_file.write_text(signed_jwt("workload-1", elsewhere))
    workload = grant == "workload-identity"

    def spec(**settings: str) -> ServerSpec:
        return _workload(server, token_file, **settings) if workload else _client_credentials(server, **settings)

    sent = len(_token_requests(server))
    # When knime-mcp connects, then it refuses before the token request, naming the setting and the option to set
    with pytest.raises(ServerAuthError) as failed:
        await _whoami(spec(), credentials=_client)
    assert len(_token_requests(server)) == sent
    assert f"names the authorization server {elsewhere}" in str(failed.value) and "another host" in str(failed.value)
    assert f"'Authorization server (issuer)' to {elsewhere} (--issuer {elsewhere})" in (failed.value.hint or "")
    # And with that issuer set, it signs in there
    assert await _whoami(spec(issuer=elsewhere), credentials=_client) == ("workload-1" if workload else AS_CLIENT)


async def test_an_authorization_server_on_the_mcp_servers_own_host_needs_no_issuer(
    jwt_bearer_server: RunningServer,
) -> None:
    assert await _whoami(_client_credentials(jwt_bearer_server), credentials=_client) == AS_CLIENT


@pytest.mark.parametrize(
    ("server", "target", "refused"),
    [
        ("https://8.8.8.8/mcp", "http://169.254.169.254/latest", "a link-local address"),
        ("https://8.8.8.8/mcp", "http://10.0.0.5/.well-known/x", "a private address"),
        ("https://8.8.8.8/mcp", "http://[::ffff:127.0.0.1]/x", "a loopback address (IPv4 127.0.0.1 inside IPv6)"),
        ("http://10.1.1.1/mcp", "http://127.0.0.1/x", "a loopback address"),
        ("http://127.0.0.1/mcp", "http://169.254.169.254/x", "a link-local address"),
        ("http://127.0.0.1/mcp", "http://10.0.0.5/x", None),
        ("http://10.1.1.1/mcp", "http://10.0.0.5/x", None),
        ("http://127.0.0.1/mcp", "https://1.1.1.1/x", None),
        ("https://8.8.8.8/mcp", "https://1.1.1.1/x", None),
    ],
)
async def test_discovery_never_leads_further_in_than_the_server_is(
    server: str, target: str, refused: str | None
) -> None:
    if refused is None:
        assert (await check_discovery(target, server_url=server)).address in target
    else:
        with pytest.raises(ConfigError, match=re.escape(refused)):
            await check_discovery(target, server_url=server)


async def test_a_server_on_the_internet_cannot_lead_the_sign_in_to_this_machine(
    authorization_server_elsewhere: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the MCP server as if on the internet (its address resolves as a public one), naming its authorization
    # server at localhost, this machine
    server = authorization_server_elsewhere
    resolve = urlguard._resolve

    async def public_server(host: str, port: int, shown: str) -> list[object]:
        return [ipaddress.ip_address("93.184.215.14")] if host == "127.0.0.1" else await resolve(host, port, shown)

    monkeypatch.setattr(urlguard, "_resolve", public_server)
    token_file = tmp_path / "token"
    token_file.write_text(signed_jwt("workload-1", issuer_of(server)))
    fetched = said(server, "metadata request")
    # When knime-mcp connects, then it stops before fetching the authorization server's metadata, saying why
    with pytest.raises(ServerAuthError) as failed:
        await _whoami(_workload(server, token_file))
    assert said(server, "metadata request") == fetched
    assert "127.0.0.1, a loopback address, further in than the server is" in str(failed.value)
    assert "'Authorization server (issuer)'" in (failed.value.hint or "")
