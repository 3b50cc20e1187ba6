"""OAuth sign-in against a real authorization server (npm `oidc-provider`) guarding a real MCP server.

The browser is tests/scripted_browser.py, named in ``BROWSER``, which logs in and consents through the provider's own
pages; tokens go to a folder of each test's own (fixtures.oauth_servers.browser).
"""

from __future__ import annotations

import json
import logging
import stat
import time
from functools import partial
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest

from fixtures.oauth_servers import CLIENT_ID, CLIENT_SECRET, MCP_TOOLS, OAuthServers, browser_visits
from knime_mcp import auth as oauth
from knime_mcp.config import AuthRef, ServerSpec
from knime_mcp.errors import ServerAuthError
from knime_mcp.mcp.client import McpClient

pytestmark = pytest.mark.anyio


def _visits(browser_log: Path) -> list[dict[str, str]]:
    """The query of each authorization URL the browser was sent to."""
    queries = (parse_qs(urlsplit(line).query) for line in browser_visits(browser_log))
    return [{key: values[0] for key, values in query.items()} for query in queries]


def _stored(url: str, client: oauth.OAuthClient | None = None) -> dict[str, object]:
    return json.loads(oauth.token_store(url, client or oauth.OAuthClient()).path.read_text())


async def _tool_names(spec: ServerSpec, **options: object) -> list[str]:
    async with McpClient(spec, **options) as client:  # type: ignore[arg-type]
        return [tool.name for tool in await client.list_tools()]


@pytest.mark.parametrize("transport", ["http_url", "sse_url"])
async def test_an_interactive_sign_in_registers_uses_pkce_and_the_resource_and_stores_the_tokens(
    oauth_servers: OAuthServers, browser: Path, transport: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Given an MCP server that wants OAuth, and a person at a browser
    url = getattr(oauth_servers, transport)
    shown: list[str] = []
    caplog.set_level(logging.DEBUG)
    # When knime-mcp connects with OAuth sign-in
    names = await _tool_names(ServerSpec(target=url, auth=AuthRef(kind="oauth")), show_sign_in=shown.append)
    # Then the person signed in once, through the authorization code grant with PKCE, state and the resource
    assert names == MCP_TOOLS
    (visit,) = _visits(browser)
    assert visit["code_challenge_method"] == "S256" and visit["state"] and visit["resource"] == url
    assert visit["redirect_uri"].startswith("http://127.0.0.1:") and shown and shown[0].startswith(oauth_servers.issuer)
    # And the tokens are stored for this user only, and appear in no log
    store = oauth.token_store(url, oauth.OAuthClient()).path
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    tokens = _stored(url)["tokens"]
    assert tokens["access_token"] not in caplog.text and tokens["refresh_token"] not in caplog.text  # type: ignore[index]


async def test_a_later_run_uses_the_stored_sign_in_and_refreshes_it_before_it_expires_without_a_person(
    oauth_servers: OAuthServers, browser: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a person signed in once
    spec = ServerSpec(target=oauth_servers.http_url, auth=AuthRef(kind="oauth"))
    await _tool_names(spec, show_sign_in=lambda url: None)
    first = _stored(oauth_servers.http_url)["tokens"]
    # When later runs connect where nobody can sign in (a Hub executor, a batch run): one while the token is
    # fresh, one when it is about to expire (the margin raised here so the test need not wait)
    fresh = await _tool_names(spec)
    monkeypatch.setattr(oauth.store, "REFRESH_MARGIN_SECONDS", 10**9)
    refreshed = await _tool_names(spec)
    # Then both work without a browser, the second with a new access token from the refresh token
    assert fresh == refreshed == MCP_TOOLS and len(_visits(browser)) == 1
    assert _stored(oauth_servers.http_url)["tokens"]["access_token"] != first["access_token"]  # type: ignore[index]


async def test_a_registered_client_is_kept_and_reused_by_the_next_sign_in(
    oauth_servers: OAuthServers, browser: Path
) -> None:
    # Given a person signed in once, and the tokens were then lost (the client registration kept)
    spec = ServerSpec(target=oauth_servers.http_url, auth=AuthRef(kind="oauth"))
    await _tool_names(spec, show_sign_in=lambda url: None)
    path = oauth.token_store(oauth_servers.http_url, oauth.OAuthClient()).path
    kept = {key: value for key, value in json.loads(path.read_text()).items() if key != "tokens"}
    path.write_text(json.dumps(kept))
    # When the person signs in again
    await _tool_names(spec, show_sign_in=lambda url: None)
    # Then the second sign-in used the client registered by the first
    first, second = _visits(browser)
    assert first["client_id"] == second["client_id"]


async def test_the_client_credentials_grant_needs_no_person_and_its_secret_appears_nowhere(
    oauth_servers: OAuthServers, browser: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a pre-registered confidential client, its id and secret in a KNIME credential
    caplog.set_level(logging.DEBUG)
    spec = ServerSpec(
        target=oauth_servers.http_url, auth=AuthRef(kind="oauth-client-credentials", credential="ci", scope="mcp:read")
    )
    # When knime-mcp connects
    names = await _tool_names(spec, credentials=lambda name: (CLIENT_ID, CLIENT_SECRET))
    # Then it got a token without a browser, and the secret is in no log
    assert names == MCP_TOOLS and not _visits(browser)
    assert CLIENT_SECRET not in caplog.text


async def test_a_wrong_client_secret_is_reported_as_such_without_the_secret(
    oauth_servers: OAuthServers, browser: Path
) -> None:
    spec = ServerSpec(target=oauth_servers.http_url, auth=AuthRef(kind="oauth-client-credentials", credential="ci"))
    with pytest.raises(ServerAuthError) as failed:
        await _tool_names(spec, credentials=lambda name: (CLIENT_ID, "wrong-secret-canary"))
    assert "invalid_client" in str(failed.value) and "wrong-secret-canary" not in str(failed.value)
    assert "client id and secret" in (failed.value.hint or "")


@pytest.mark.parametrize(
    ("person", "said"),
    [("deny", "'access_denied'"), ("away", "timed out")],
)
async def test_a_sign_in_the_person_denies_or_never_finishes_fails_with_what_happened(
    oauth_servers: OAuthServers, browser: Path, monkeypatch: pytest.MonkeyPatch, person: str, said: str
) -> None:
    # Given a person who denies access, or who never comes back from the browser
    monkeypatch.setenv("KNIME_MCP_TEST_BROWSER", person)
    monkeypatch.setattr(oauth.signin, "SIGN_IN_SECONDS", 3.0)
    spec = ServerSpec(target=oauth_servers.http_url, auth=AuthRef(kind="oauth"))
    # When knime-mcp connects with sign-in, then it fails saying what happened, not as a connection problem
    with pytest.raises(ServerAuthError) as failed:
        await _tool_names(spec, show_sign_in=lambda url: None)
    assert said in str(failed.value)


async def test_without_a_stored_sign_in_a_run_where_nobody_can_sign_in_says_how_to_sign_in(
    oauth_servers: OAuthServers, browser: Path
) -> None:
    spec = ServerSpec(target=oauth_servers.http_url, auth=AuthRef(kind="oauth"))
    with pytest.raises(ServerAuthError) as failed:
        await _tool_names(spec)
    assert "nobody can sign in here" in str(failed.value) and "knime-mcp login" in (failed.value.hint or "")
    assert not _visits(browser)


async def test_cancel_stops_the_wait_for_the_browser_at_once(
    oauth_servers: OAuthServers, browser: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a sign-in waiting for a person who never comes back
    monkeypatch.setenv("KNIME_MCP_TEST_BROWSER", "away")
    spec = ServerSpec(target=oauth_servers.http_url, auth=AuthRef(kind="oauth"))
    waiting = anyio.Event()
    # When the run is cancelled while it waits (bounded, so a wait that ignores cancel fails instead of hanging)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(partial(_tool_names, spec, show_sign_in=lambda url: waiting.set()))
            await waiting.wait()
            group.cancel_scope.cancel()
    # Then the wait ended with the cancel, and no tokens were stored
    assert not oauth.token_store(oauth_servers.http_url, oauth.OAuthClient()).has_tokens()


def test_the_cli_signs_in_once_uses_the_sign_in_for_every_command_and_signs_out(
    oauth_servers: OAuthServers, browser: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from knime_mcp.cli.main import main

    url = oauth_servers.http_url
    # Given a person signs in with `knime-mcp login`
    assert main(["login", url]) == 0
    signed_in = capsys.readouterr()
    # When later commands name the server without any OAuth option, in a batch run (no terminal)
    listed = main(["tools", url])
    tools = capsys.readouterr()
    called = main(["call", url, "echo", "--args", '{"text": "hi"}'])
    answer = capsys.readouterr()
    # Then they use the stored sign-in; the browser was used once, and its URL was shown on stderr
    assert (listed, called) == (0, 0) and "echo" in tools.out and json.loads(answer.out)["content"][0]["text"] == "hi"
    assert "Signed in to" in signed_in.out and oauth_servers.issuer in signed_in.err and len(_visits(browser)) == 1
    # And after `knime-mcp logout` the server asks for sign-in again, and the error says how
    assert main(["logout", url]) == 0 and "removed 1 stored sign-in" in capsys.readouterr().out
    assert main(["tools", url]) == 3
    assert "--auth oauth" in capsys.readouterr().err


def test_the_cli_uses_the_client_credentials_grant_with_a_secret_from_the_environment(
    oauth_servers: OAuthServers, browser: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from knime_mcp.cli.main import main

    monkeypatch.setenv("KNIME_MCP_TEST_CLIENT_SECRET", CLIENT_SECRET)
    grant = ["--auth", "oauth-client-credentials", "--client-id", CLIENT_ID]
    # When the CLI lists tools with the client credentials grant, the secret given as an environment reference
    code = main(["tools", oauth_servers.http_url, *grant, "--client-secret", "${KNIME_MCP_TEST_CLIENT_SECRET}"])
    listed = capsys.readouterr()
    # Then it works without a browser, and the secret is printed nowhere; a literal secret is refused
    assert code == 0 and "echo" in listed.out and not _visits(browser)
    assert CLIENT_SECRET not in listed.out + listed.err
    assert main(["tools", oauth_servers.http_url, *grant, "--client-secret", CLIENT_SECRET]) == 2
    assert CLIENT_SECRET not in capsys.readouterr().err


async def test_an_expired_or_revoked_sign_in_where_nobody_can_sign_in_says_to_sign_in_again(
    oauth_servers: OAuthServers, browser: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a stored sign-in whose refresh token the authorization server no longer knows (revoked, or expired), and
    # whose access token is about to expire (the margin raised here so the test need not wait)
    spec = ServerSpec(target=oauth_servers.http_url, auth=AuthRef(kind="oauth"))
    await _tool_names(spec, show_sign_in=lambda url: None)
    path = oauth.token_store(oauth_servers.http_url, oauth.OAuthClient()).path
    stored = json.loads(path.read_text())
    stored["tokens"]["refresh_token"] = "revoked-refresh-token"
    path.write_text(json.dumps(stored))
    monkeypatch.setattr(oauth.store, "REFRESH_MARGIN_SECONDS", 10**9)
    # When a run where nobody can sign in connects
    with pytest.raises(ServerAuthError) as failed:
        await _tool_names(spec)
    # Then it says the sign-in has expired and how to sign in again; no browser opened
    assert "no stored sign-in, or it has expired" in str(failed.value)
    assert "knime-mcp login" in (failed.value.hint or "") and len(_visits(browser)) == 1


async def test_a_pre_registered_client_signs_in_without_registering(oauth_servers: OAuthServers, browser: Path) -> None:
    # Given a public client the authorization server's administrators registered for knime-mcp
    spec = ServerSpec(target=oauth_servers.http_url, auth=AuthRef(kind="oauth", client_id="knime-mcp-desktop"))
    # When a person signs in with it
    names = await _tool_names(spec, show_sign_in=lambda url: None)
    # Then the sign-in used that client, and knime-mcp stored no registration of its own
    (visit,) = _visits(browser)
    assert names == MCP_TOOLS and visit["client_id"] == "knime-mcp-desktop"
    assert "client" not in _stored(oauth_servers.http_url, oauth.OAuthClient(client_id="knime-mcp-desktop"))


@pytest.mark.parametrize(
    ("server", "said", "hint"),
    [
        # an authorization server that publishes no metadata and takes no registration
        ("mcp_url_naming_no_authorization_server", "refused to register knime-mcp as a client", "client id"),
        # an authorization server named by an address whose metadata names another issuer
        ("mcp_url_naming_the_issuer_otherwise", "issuer mismatch", "do not sign in"),
    ],
)
async def test_an_authorization_server_that_cannot_be_used_stops_the_sign_in_before_any_browser_opens(
    server: str, said: str, hint: str, browser: Path, request: pytest.FixtureRequest
) -> None:
    # Given an MCP server whose authorization server cannot be used
    spec = ServerSpec(target=request.getfixturevalue(server), auth=AuthRef(kind="oauth"))
    # When a person would sign in, then knime-mcp says why it cannot and what to do, before any browser opens
    with pytest.raises(ServerAuthError) as failed:
        await _tool_names(spec, show_sign_in=lambda url: None)
    assert said in str(failed.value) and hint in (failed.value.hint or "")
    assert not _visits(browser)


@pytest.mark.parametrize(
    ("transport", "client_id"), [("http_url", None), ("sse_url", None), ("http_url", "knime-mcp-desktop")]
)
async def test_a_tool_that_needs_a_larger_scope_asks_for_it_once_and_the_call_goes_through(
    oauth_servers: OAuthServers, browser: Path, transport: str, client_id: str | None
) -> None:
    # Given a person signed in with the scope to read, through a client knime-mcp registered, or a pre-registered one
    url = getattr(oauth_servers, transport)
    spec = ServerSpec(target=url, auth=AuthRef(kind="oauth", client_id=client_id))
    async with McpClient(spec, show_sign_in=lambda url: None) as client:
        await client.list_tools()
        # When a tool that writes answers 403 insufficient_scope
        result = await client.call_tool("add_note", {"text": "hello"})
    # Then the person was asked once more, for the larger scope as well as the one held, and the call went through
    assert not result.is_error and "hello" in result.structured["result"]  # type: ignore[index]
    first, second = _visits(browser)
    assert "mcp:write" not in first["scope"].split() and {"mcp:read", "mcp:write"} <= set(second["scope"].split())
    stored = _stored(url, oauth.OAuthClient(client_id=client_id))
    assert "mcp:write" in stored["tokens"]["scope"].split()  # type: ignore[index]


async def test_a_server_that_still_refuses_after_the_step_up_is_not_asked_again(
    oauth_servers: OAuthServers, browser: Path
) -> None:
    # Given a tool whose challenge names a scope that is not the one it checks
    spec = ServerSpec(target=oauth_servers.sse_url, auth=AuthRef(kind="oauth"))
    async with McpClient(spec, show_sign_in=lambda url: None) as client:
        await client.list_tools()
        # When it is called, then it fails once the larger scope was asked for once, saying what the server wants
        with pytest.raises(ServerAuthError) as failed:
            await client.call_tool("purge")
    assert "insufficient_scope" in str(failed.value) and "'mcp:read mcp:write'" in str(failed.value)
    assert "administrators" in (failed.value.hint or "") and len(_visits(browser)) == 2


async def test_a_step_up_the_person_denies_fails_as_a_sign_in_and_the_call_did_not_run(
    oauth_servers: OAuthServers, browser: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = ServerSpec(target=oauth_servers.http_url, auth=AuthRef(kind="oauth"))
    async with McpClient(spec, show_sign_in=lambda url: None) as client:
        await client.list_tools()
        # When the person denies the larger scope
        monkeypatch.setenv("KNIME_MCP_TEST_BROWSER", "deny")
        with pytest.raises(ServerAuthError) as failed:
            await client.call_tool("add_note", {"text": "denied"})
        # Then the call fails with the sign-in's answer, and the run does not ask the person again
        with pytest.raises(ServerAuthError):
            await client.call_tool("add_note", {"text": "denied again"})
    assert "'access_denied'" in str(failed.value) and len(_visits(browser)) == 2
    # And the call did not run: a later run that gets the scope sees no note from it
    monkeypatch.setenv("KNIME_MCP_TEST_BROWSER", "consent")
    async with McpClient(spec, show_sign_in=lambda url: None) as client:
        notes = (await client.call_tool("add_note", {"text": "granted"})).structured["result"]  # type: ignore[index]
    assert "granted" in notes and not {"denied", "denied again"} & set(notes)


@pytest.mark.parametrize("transport", ["http_url", "sse_url"])
async def test_an_access_token_the_server_no_longer_takes_is_refreshed_after_the_401_without_a_person(
    oauth_servers: OAuthServers, browser: Path, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a session signed in through a client whose access tokens live 2 s, on a machine whose clock is behind,
    # so that the client still takes the token for valid when the server no longer does
    url = getattr(oauth_servers, transport)
    client_id = "knime-mcp-short-lived"
    monkeypatch.setattr(oauth.store, "REFRESH_MARGIN_SECONDS", 0)
    spec = ServerSpec(target=url, auth=AuthRef(kind="oauth", client_id=client_id))
    async with McpClient(spec, show_sign_in=lambda url: None) as client:
        await client.list_tools()
        first = _stored(url, oauth.OAuthClient(client_id=client_id))["tokens"]["access_token"]  # type: ignore[index]
        client._oauth.auth.context.token_expiry_time = time.time() + 3600  # type: ignore[union-attr]
        await anyio.sleep(3)
        # When the next call is made, and its answer is 401
        result = await client.call_tool("echo", {"text": "still here"})
    # Then it went through with a refreshed token, without asking the person again (nobody may be there)
    assert result.structured == {"result": "still here"} and len(_visits(browser)) == 1
    assert _stored(url, oauth.OAuthClient(client_id=client_id))["tokens"]["access_token"] != first  # type: ignore[index]


async def test_a_client_id_that_is_a_metadata_document_url_signs_in_as_that_client_without_registering(
    oauth_servers: OAuthServers, browser: Path
) -> None:
    # Given an organisation publishes a client ID metadata document for knime-mcp, and names its URL as the client id
    document = oauth_servers.client_metadata_url
    spec = ServerSpec(target=oauth_servers.http_url, auth=AuthRef(kind="oauth", client_id=document))
    # When a person signs in
    names = await _tool_names(spec, show_sign_in=lambda url: None)
    # Then the authorization server knew knime-mcp by that URL: no client was registered
    (visit,) = _visits(browser)
    assert names == MCP_TOOLS and visit["client_id"] == document
    stored = _stored(oauth_servers.http_url, oauth.OAuthClient(client_metadata_url=document))
    assert stored["client"]["client_id"] == document  # type: ignore[index]
