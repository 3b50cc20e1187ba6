"""OAuth sign-in against hostile neighbours: a local process at the redirect port, an MCP server that names another
authorization server, an authorization server that answers with megabytes.

The sign-ins go through the real `oidc-provider` (fixtures.oauth_servers) with the scripted browser; the hostile
authorization server is tests/fakes/fake_authorization_server.py, which records every request it gets.
"""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from fixtures.oauth_servers import (
    CLIENT_ID,
    CLIENT_SECRET,
    MCP_TOOLS,
    HostileOAuth,
    OAuthServers,
    browser_visits,
    hostile_oauth,
)
from knime_mcp import auth as oauth
from knime_mcp.config import AuthRef, ServerSpec
from knime_mcp.errors import ConfigError, ServerAuthError
from knime_mcp.mcp.client import McpClient
from knime_mcp.net.urlguard import PinnedHost, check_server

PUBLIC = "http://8.8.8.8/mcp"
"""A public address, which the SSRF guard lets pass: only the other checks can stop a server from data there."""

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def shared_hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileOAuth]:
    """The hostile authorization server with its defaults and the MCP server naming it, started once for the module:
    starting the pair costs seconds, and with the defaults it keeps nothing from one test to the next."""
    with hostile_oauth(tmp_path_factory.mktemp("hostile-oauth")) as hostile:
        yield hostile


@pytest.fixture
def hostile(shared_hostile: HostileOAuth) -> HostileOAuth:
    """The shared hostile pair with its record of requests emptied: what it records is this test's."""
    shared_hostile.log.unlink(missing_ok=True)
    return shared_hostile


async def _tool_names(spec: ServerSpec, **options: object) -> list[str]:
    async with McpClient(spec, **options) as client:  # type: ignore[arg-type]
        return [tool.name for tool in await client.list_tools()]


class _Neighbour:
    """A local process that reaches the redirect listener before the browser does: it sends its requests as soon
    as the sign-in address is shown, and reads the answers afterwards."""

    REQUESTS = ("/favicon.ico", "/callback?code=stolen&state=wrong", "/callback?code=stolen")

    def __init__(self) -> None:
        self._connections: list[socket.socket] = []

    def show(self, url: str) -> None:
        redirect = urlsplit(parse_qs(urlsplit(url).query)["redirect_uri"][0])
        for path in self.REQUESTS:
            connection = socket.create_connection((redirect.hostname, redirect.port), timeout=30)
            connection.sendall(f"GET {path} HTTP/1.1\r\nHost: {redirect.netloc}\r\nConnection: close\r\n\r\n".encode())
            self._connections.append(connection)

    def answers(self) -> list[str]:
        """The status line each request got."""
        lines = []
        for connection in self._connections:
            with connection:
                lines.append(connection.makefile("rb").readline().decode().strip())
        return lines


async def test_other_requests_at_the_redirect_port_neither_end_nor_spoil_the_sign_in(
    oauth_servers: OAuthServers, browser: Path
) -> None:
    # Given a local process that reaches the redirect listener before the browser comes back: another path, the
    # callback with a wrong state, the callback without a state
    neighbour = _Neighbour()
    spec = ServerSpec(target=oauth_servers.http_url, auth=AuthRef(kind="oauth"))
    # When a person signs in
    names = await _tool_names(spec, show_sign_in=neighbour.show)
    # Then the sign-in waited for the real redirect and completed; each of the neighbour's requests got 404
    assert names == MCP_TOOLS and len(browser_visits(browser)) == 1
    assert [line.split()[1] for line in neighbour.answers()] == ["404", "404", "404"]


def test_the_redirect_port_takes_no_connection_before_the_browser_is_opened() -> None:
    # Given a sign-in prepared (its redirect address is in the client's registration) but not started
    sign_in = oauth.BrowserSignIn("server", show=lambda url: None)
    try:
        port = urlsplit(sign_in.redirect_uri).port
        # When a local process connects to the port, then it is refused: nothing waits there to be answered later
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
    finally:
        sign_in.close()


@pytest.mark.parametrize("status", ["201", "400"])
async def test_a_registration_answer_of_megabytes_is_refused_with_a_short_error_and_not_stored(
    tmp_path: Path, browser: Path, status: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an MCP server naming an authorization server that answers a registration with 5 MB (a registration, or
    # an error); a sign-in that went ahead would end soon
    monkeypatch.setattr(oauth.signin, "SIGN_IN_SECONDS", 3.0)
    with hostile_oauth(tmp_path, "--registration-bytes", "5000000", "--registration-status", status) as hostile:
        spec = ServerSpec(target=hostile.mcp_url, auth=AuthRef(kind="oauth"))
        # When a person would sign in
        with pytest.raises(ServerAuthError) as failed:
            await _tool_names(spec, show_sign_in=lambda url: None)
        registered = [entry for entry in hostile.requests() if entry["path"] == "/register"]
    # Then the answer is refused with a short error that says so, nothing was stored, and no browser opened
    assert len(registered) == 1 and "larger than" in str(failed.value) and len(str(failed.value)) < 1000
    assert not oauth.token_store(hostile.mcp_url, oauth.OAuthClient()).path.exists()
    assert not browser_visits(browser)


def _secret_reached(hostile: HostileOAuth) -> bool:
    """Whether the client secret reached the hostile authorization server, by HTTP basic authentication or in a form."""
    basic = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
    return any(basic in json.dumps(entry) or CLIENT_SECRET in json.dumps(entry) for entry in hostile.requests())


def _credentials(name: str) -> tuple[str, str]:
    return CLIENT_ID, CLIENT_SECRET


@pytest.mark.parametrize("kind", ["oauth-client-credentials", "oauth"])
async def test_the_client_secret_goes_only_to_the_configured_issuer(
    oauth_servers: OAuthServers, browser: Path, hostile: HostileOAuth, kind: str
) -> None:
    # Given a confidential client whose issuer is configured, and an MCP server that names another authorization server
    auth = AuthRef(kind=kind, credential="ci", issuer=oauth_servers.issuer)  # type: ignore[arg-type]
    # When knime-mcp connects (client credentials, or a sign-in with a pre-registered confidential client)
    with pytest.raises(ServerAuthError) as failed:
        await _tool_names(
            ServerSpec(target=hostile.mcp_url, auth=auth), credentials=_credentials, show_sign_in=lambda url: None
        )
    reached = hostile.requests()
    # Then it stops before anything goes to that server, saying which issuer it names and which one is configured
    assert reached == [] and not browser_visits(browser)
    assert hostile.issuer in str(failed.value) and oauth_servers.issuer in str(failed.value)
    assert "Authorization server (issuer)" in (failed.value.hint or "")
    # And the configured issuer's own MCP server works
    if kind == "oauth-client-credentials":
        assert await _tool_names(ServerSpec(target=oauth_servers.http_url, auth=auth), credentials=_credentials)


async def test_without_a_configured_issuer_the_secret_goes_only_to_the_issuer_it_was_first_used_with(
    oauth_servers: OAuthServers, browser: Path, hostile: HostileOAuth
) -> None:
    # Given the client credentials grant without a configured issuer, used once with the server's own issuer
    auth = AuthRef(kind="oauth-client-credentials", credential="ci")
    assert await _tool_names(ServerSpec(target=oauth_servers.http_url, auth=auth), credentials=_credentials)
    client = oauth.OAuthClient(client_id=CLIENT_ID)
    first = oauth.token_store(oauth_servers.http_url, client).confirmed_issuer()
    assert first is not None and first.rstrip("/") == oauth_servers.issuer
    # (the same server, as far as its stored sign-in goes, now naming another authorization server)
    oauth.token_store(hostile.mcp_url, client).confirm_issuer(first)
    # When knime-mcp connects again
    with pytest.raises(ServerAuthError) as failed:
        await _tool_names(ServerSpec(target=hostile.mcp_url, auth=auth), credentials=_credentials)
    # Then the secret went nowhere, and the error names the issuer to confirm
    assert not _secret_reached(hostile) and hostile.requests() == []
    assert f"--issuer {hostile.issuer}" in (failed.value.hint or "") and first in str(failed.value)


async def test_a_server_from_data_never_starts_oauth_discovery(browser: Path, hostile: HostileOAuth) -> None:
    # Given a server from data (checked and pinned by the SSRF guard), whose 401 names an authorization server
    spec = ServerSpec(target=hostile.mcp_url)
    # When it is connected as a checked server from data is, and when it asks for OAuth
    with pytest.raises(ServerAuthError) as failed:
        await _tool_names(spec, pin=PinnedHost("127.0.0.1", "127.0.0.1"), show_sign_in=lambda url: None)
    with pytest.raises(ConfigError, match="asks for oauth authentication"):
        await check_server(ServerSpec(target=PUBLIC, auth=AuthRef(kind="oauth")), hint="")
    # Then no discovery request reached the authorization server it names
    assert hostile.requests() == []
    assert "asks for sign-in with OAuth" in str(failed.value)


def test_the_cli_takes_the_issuer_and_refuses_a_server_that_names_another(
    oauth_servers: OAuthServers, browser: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from knime_mcp.cli.main import main

    monkeypatch.setenv("KNIME_MCP_TEST_CLIENT_SECRET", CLIENT_SECRET)
    secret = "${KNIME_MCP_TEST_CLIENT_SECRET}"
    grant = ["--auth", "oauth-client-credentials", "--client-id", CLIENT_ID, "--client-secret", secret]
    # When the CLI names another issuer than the server does, it refuses (exit 3); with the server's own, it works
    assert main(["tools", oauth_servers.http_url, *grant, "--issuer", "http://127.0.0.1:9"]) == 3
    assert "not the issuer set in the OAuth settings" in capsys.readouterr().err
    assert main(["tools", oauth_servers.http_url, *grant, "--issuer", oauth_servers.issuer]) == 0
    assert "echo" in capsys.readouterr().out
    # And --issuer without OAuth is a usage error
    assert main(["tools", oauth_servers.http_url, "--issuer", oauth_servers.issuer]) == 2
