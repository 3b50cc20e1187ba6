"""The JWT bearer grants (RFC 7523): workload identity from a token file, and enterprise-managed authorization (an
identity provider's ID token exchanged for an ID-JAG), against tests/servers/jwt_bearer_server.py on loopback.
"""

from __future__ import annotations

import logging
from pathlib import Path

import httpx2
import pytest

from fixtures.jwt_bearer_servers import (
    AS_CLIENT,
    CLIENT_SECRET,
    IDP_CLIENT,
    KEY,
    issuer_of,
    signed_jwt,
)
from fixtures.python_servers import RunningServer
from knime_mcp.auth import spec_token_store
from knime_mcp.config import AuthRef, ServerSpec
from knime_mcp.errors import ConfigError, ServerAuthError
from knime_mcp.mcp.client import McpClient

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("own_token_folder")]


def _token_requests(server: RunningServer) -> list[str]:
    return [line for line in server.log_path.read_text().splitlines() if line.startswith("token request: ")]


async def _whoami(spec: ServerSpec, **options: object) -> str:
    async with McpClient(spec, **options) as client:  # type: ignore[arg-type]
        return str((await client.call_tool("whoami")).structured["result"])  # type: ignore[index]


def _workload(server: RunningServer, token_file: Path, **settings: str) -> ServerSpec:
    return ServerSpec(
        target=server.url, auth=AuthRef(kind="oauth-workload-identity", token_file=str(token_file), **settings)
    )


async def test_workload_identity_signs_in_with_the_token_file_and_reads_it_again_when_the_platform_rotates_it(
    jwt_bearer_server: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Given the platform's token in a file, named by an environment variable as Kubernetes or Azure set it
    caplog.set_level(logging.DEBUG)
    token_file = tmp_path / "token"
    first = signed_jwt("workload-1", issuer_of(jwt_bearer_server))
    token_file.write_text(first + "\n")
    monkeypatch.setenv("WORKLOAD_TOKEN_FILE", str(token_file))
    spec = ServerSpec(
        target=jwt_bearer_server.url, auth=AuthRef(kind="oauth-workload-identity", token_file="${WORKLOAD_TOKEN_FILE}")
    )
    async with McpClient(spec) as client:
        # When knime-mcp calls a tool, then its token was granted for the workload in the file
        assert (await client.call_tool("whoami")).structured == {"result": "workload-1"}
        # And when the platform rotates the file and the authorization server revokes the old access token,
        token_file.write_text(signed_jwt("workload-2", issuer_of(jwt_bearer_server)))
        httpx2.post(f"{issuer_of(jwt_bearer_server)}/revoke")
        # then the next call is granted for the new token, read from the file again
        assert (await client.call_tool("whoami")).structured == {"result": "workload-2"}
    # And the platform's token is in no log
    assert first not in caplog.text


async def test_a_missing_token_file_is_named_with_the_setting_to_check(
    jwt_bearer_server: RunningServer, tmp_path: Path
) -> None:
    with pytest.raises(ServerAuthError) as failed:
        await _whoami(_workload(jwt_bearer_server, tmp_path / "absent"))
    assert f"token file {tmp_path / 'absent'} does not exist" in str(failed.value)
    assert "'Token file'" in (failed.value.hint or "")


async def test_an_expired_token_in_the_file_is_reported_before_it_is_sent(
    jwt_bearer_server: RunningServer, tmp_path: Path
) -> None:
    # Given a token file the platform stopped renewing
    token_file = tmp_path / "token"
    token_file.write_text(signed_jwt("workload-old", issuer_of(jwt_bearer_server), expires_in=-60))
    sent = len(_token_requests(jwt_bearer_server))
    # When knime-mcp connects, then it says the token expired, and did not send it
    with pytest.raises(ServerAuthError) as failed:
        await _whoami(_workload(jwt_bearer_server, token_file))
    assert "holds a token that expired at" in str(failed.value) and "projected" in (failed.value.hint or "")
    assert len(_token_requests(jwt_bearer_server)) == sent


@pytest.mark.parametrize(
    ("content", "said"), [("", "is empty"), ("not a jwt", "does not hold a JWT")], ids=["empty", "not-jwt"]
)
async def test_a_token_file_without_a_token_says_what_it_holds(
    jwt_bearer_server: RunningServer, tmp_path: Path, content: str, said: str
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(content)
    with pytest.raises(ServerAuthError, match=said):
        await _whoami(_workload(jwt_bearer_server, token_file))


async def test_a_token_the_authorization_server_refuses_is_reported_once_with_its_reason(
    jwt_bearer_server: RunningServer, tmp_path: Path
) -> None:
    # Given a token the authorization server does not trust (signed by another platform)
    token_file = tmp_path / "token"
    token = signed_jwt("stranger", issuer_of(jwt_bearer_server), key="another-platform-" + KEY)
    token_file.write_text(token)
    sent = len(_token_requests(jwt_bearer_server))
    # When knime-mcp connects, then it says the authorization server refused the grant, and why
    with pytest.raises(ServerAuthError) as failed:
        await _whoami(_workload(jwt_bearer_server, token_file))
    assert "refused the JWT bearer grant (invalid_grant: workload token *** not accepted" in str(failed.value)
    assert "administrators" in (failed.value.hint or "") and token not in str(failed.value)
    assert token.rsplit(".", 1)[1] not in f"{failed.value} {failed.value.hint}"  # the server quoted it: masked
    # And it asked once, without retrying or falling back to another grant
    assert _token_requests(jwt_bearer_server)[sent:] == ["token request: urn:ietf:params:oauth:grant-type:jwt-bearer"]


async def test_a_configured_issuer_keeps_the_workload_token_from_another_authorization_server(
    jwt_bearer_server: RunningServer, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(signed_jwt("workload-1", issuer_of(jwt_bearer_server)))
    sent = len(_token_requests(jwt_bearer_server))
    with pytest.raises(ServerAuthError, match="not the issuer set in the OAuth settings"):
        await _whoami(_workload(jwt_bearer_server, token_file, issuer="https://login.example.com"))
    assert len(_token_requests(jwt_bearer_server)) == sent


def _id_jag(server: RunningServer, **settings: str) -> ServerSpec:
    auth = {
        "kind": "oauth-id-jag",
        "credential": "mcp-client",
        "assertion": "id-token",
        "idp_token_endpoint": f"{issuer_of(server)}/idp/token",
        "idp_client_id": IDP_CLIENT,
        **settings,
    }
    return ServerSpec(target=server.url, auth=AuthRef(**auth))  # type: ignore[arg-type]


def _credentials(id_token: str, client_secret: str = CLIENT_SECRET) -> object:
    known = {"mcp-client": (AS_CLIENT, client_secret), "id-token": ("", id_token)}
    return known.__getitem__


async def test_an_id_token_is_exchanged_for_an_id_jag_that_signs_the_person_in_at_the_mcp_server(
    jwt_bearer_server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a person's ID token from the enterprise identity provider and the client's secret, in KNIME credentials
    caplog.set_level(logging.DEBUG)
    id_token = signed_jwt("ada@example.com", IDP_CLIENT)
    sent = len(_token_requests(jwt_bearer_server))
    # When knime-mcp calls a tool, then the MCP server knows the person
    assert await _whoami(_id_jag(jwt_bearer_server), credentials=_credentials(id_token)) == "ada@example.com"
    # Through the token exchange at the identity provider, then the JWT bearer grant
    assert _token_requests(jwt_bearer_server)[sent:] == [
        "token request: urn:ietf:params:oauth:grant-type:token-exchange at the identity provider",
        "token request: urn:ietf:params:oauth:grant-type:jwt-bearer",
    ]
    assert id_token not in caplog.text and CLIENT_SECRET not in caplog.text


async def test_an_id_token_from_an_environment_variable_works_the_same(
    jwt_bearer_server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENTERPRISE_ID_TOKEN", signed_jwt("grace@example.com", IDP_CLIENT))
    monkeypatch.setenv("XAA_CLIENT_SECRET", CLIENT_SECRET)
    spec = _id_jag(
        jwt_bearer_server,
        credential=None,
        secret="${XAA_CLIENT_SECRET}",
        client_id=AS_CLIENT,
        assertion="${ENTERPRISE_ID_TOKEN}",
    )
    assert await _whoami(spec) == "grace@example.com"


async def test_an_identity_provider_that_refuses_the_exchange_is_named_with_its_reason(
    jwt_bearer_server: RunningServer,
) -> None:
    expired = signed_jwt("ada@example.com", IDP_CLIENT, expires_in=-60)
    with pytest.raises(ServerAuthError) as failed:
        await _whoami(_id_jag(jwt_bearer_server), credentials=_credentials(expired))
    message = str(failed.value)
    assert f"identity provider at {issuer_of(jwt_bearer_server)}/idp/token refused to exchange" in message
    assert "invalid_grant: ID token *** not accepted" in message and expired not in message
    assert "sign in at the identity provider again" in (failed.value.hint or "")


async def test_an_authorization_server_that_refuses_the_client_is_reported_without_the_secret(
    jwt_bearer_server: RunningServer,
) -> None:
    id_token = signed_jwt("ada@example.com", IDP_CLIENT)
    with pytest.raises(ServerAuthError) as failed:
        await _whoami(_id_jag(jwt_bearer_server), credentials=_credentials(id_token, client_secret="wrong-canary-71"))
    assert "refused the JWT bearer grant (invalid_client" in str(failed.value)
    assert "wrong-canary-71" not in str(failed.value) and "client id and secret" in (failed.value.hint or "")


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"kind": "oauth-workload-identity"}, "needs a token file"),
        ({"kind": "oauth", "token_file": "/var/run/token"}, "goes with workload identity"),
        ({"kind": "oauth-id-jag", "assertion": "id-token"}, "identity provider's token endpoint"),
        ({"kind": "oauth-client-credentials", "credential": "c", "idp_client_id": "x"}, "ID-JAG grant"),
        (
            {
                "kind": "oauth-id-jag",
                "assertion": "eyJhbGciOiJIUzI1.eyJzdWIiOiJhZGEi.sig",
                "idp_token_endpoint": "https://idp",
            },
            "not written out",
        ),
    ],
)
def test_the_settings_of_a_jwt_bearer_grant_are_checked_without_echoing_a_secret(
    settings: dict[str, str], said: str
) -> None:
    with pytest.raises(ConfigError, match=said) as failed:
        AuthRef(**settings)  # type: ignore[arg-type]
    assert "eyJ" not in str(failed.value)


def test_the_new_settings_are_kept_in_a_servers_json_only_when_set() -> None:
    plain = ServerSpec(target="https://mcp.example.com/mcp", auth=AuthRef(kind="oauth"))
    assert "token_file" not in plain.to_dict()["auth"] and "idp_token_endpoint" not in plain.to_dict()["auth"]
    workload = ServerSpec(
        target="https://mcp.example.com/mcp", auth=AuthRef(kind="oauth-workload-identity", token_file="${TOKEN_FILE}")
    )
    assert workload.to_dict()["auth"]["token_file"] == "${TOKEN_FILE}"
    assert ServerSpec.from_dict(workload.to_dict()) == workload


def test_the_cli_uses_workload_identity_with_the_token_file_an_environment_variable_names(
    jwt_bearer_server: RunningServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from knime_mcp.cli.main import main

    token_file = tmp_path / "token"
    token_file.write_text(signed_jwt("batch-job", issuer_of(jwt_bearer_server)))
    monkeypatch.setenv("AZURE_FEDERATED_TOKEN_FILE", str(token_file))
    grant = ["--auth", "oauth-workload-identity", "--token-file", "${AZURE_FEDERATED_TOKEN_FILE}"]
    assert main(["tools", jwt_bearer_server.url, *grant]) == 0
    assert "whoami" in capsys.readouterr().out


def test_the_cli_uses_an_id_token_from_the_environment_and_refuses_one_written_out(
    jwt_bearer_server: RunningServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from knime_mcp.cli.main import main

    id_token = signed_jwt("ada@example.com", IDP_CLIENT)
    monkeypatch.setenv("ID_TOKEN", id_token)
    monkeypatch.setenv("XAA_SECRET", CLIENT_SECRET)
    grant = [
        "--auth", "oauth-id-jag", "--client-id", AS_CLIENT, "--client-secret", "${XAA_SECRET}",
        "--idp-token-endpoint", f"{issuer_of(jwt_bearer_server)}/idp/token", "--idp-client-id", IDP_CLIENT,
    ]  # fmt: skip
    assert main(["tools", jwt_bearer_server.url, *grant, "--identity-assertion", "${ID_TOKEN}"]) == 0
    listed = capsys.readouterr()
    assert "whoami" in listed.out and id_token not in listed.out + listed.err
    assert main(["tools", jwt_bearer_server.url, *grant, "--identity-assertion", id_token]) == 2
    assert "environment reference" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--token-file", "/var/run/token"], "--token-file goes with --auth oauth-workload-identity"),
        (["--auth", "oauth", "--idp-client-id", "x"], "--idp-client-id goes with --auth oauth-id-jag"),
        (["--auth", "oauth-id-jag", "--identity-assertion", "${T}"], "needs --identity-assertion"),
    ],
)
def test_the_cli_says_which_grant_option_goes_with_what(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from knime_mcp.cli.main import main

    assert main(["tools", "https://mcp.example.com/mcp", *argv]) == 2
    assert said in capsys.readouterr().err


async def test_the_workload_token_stays_with_the_authorization_server_it_was_first_sent_to(
    jwt_bearer_server: RunningServer, tmp_path: Path
) -> None:
    # Given no issuer set: the first authorization server that grants for the token is remembered, as for a secret
    token_file = tmp_path / "token"
    token_file.write_text(signed_jwt("workload-1", issuer_of(jwt_bearer_server)))
    spec = _workload(jwt_bearer_server, token_file)
    assert await _whoami(spec) == "workload-1"
    assert spec_token_store(spec).confirmed_issuer() == issuer_of(jwt_bearer_server)
