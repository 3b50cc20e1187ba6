"""Enterprise TLS beyond the MCP server itself: the identity provider of enterprise-managed authorization behind a
company CA, reached with the MCP server's TLS settings through the run's connection pool.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import trustme

from cli_runs import run_cli
from fixtures.jwt_bearer_servers import CLIENT_SECRET, IDP_CLIENT, KEY, signed_jwt
from fixtures.python_servers import SERVERS_DIR, RunningServer, running_server
from knime_mcp.config import ServerSpec, TlsSettings
from knime_mcp.errors import ServerConnectError
from knime_mcp.mcp.client import McpClient
from test_oauth_grants import _credentials, _id_jag
from test_tls import Pki, no_ca_from_environment, pki, tls_urls  # noqa: F401  (the CA, the HTTPS servers, no CA env)

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("own_token_folder")]


@dataclass(frozen=True)
class IdpBehindCa:
    server: RunningServer
    idp_token_endpoint: str
    """The identity provider's token endpoint over HTTPS, under a certificate of :attr:`ca`."""
    ca: Path


@pytest.fixture(scope="module")
def idp_behind_ca(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IdpBehindCa]:
    folder = tmp_path_factory.mktemp("idp-tls")
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(folder / "idp.pem"))
    env = {"KNIME_MCP_TEST_JWT_KEY": KEY, "KNIME_MCP_TEST_CLIENT_SECRET": CLIENT_SECRET}
    command = [sys.executable, str(SERVERS_DIR / "jwt_bearer_server.py"), "--tls", str(folder / "idp.pem")]
    with running_server(command, folder / "server.log", env) as server:
        secure = re.search(r"over TLS at (\S+)", server.log_path.read_text())
        assert secure is not None
        yield IdpBehindCa(server, f"{secure[1]}/idp/token", folder / "ca.pem")


def _id_jag_spec(idp: IdpBehindCa, tls: TlsSettings) -> ServerSpec:
    return replace(_id_jag(idp.server, idp_token_endpoint=idp.idp_token_endpoint), tls=tls)


async def _whoami(spec: ServerSpec) -> str:
    async with McpClient(spec, credentials=_credentials(signed_jwt("ada@example.com", IDP_CLIENT))) as client:  # type: ignore[arg-type]
        return str((await client.call_tool("whoami")).structured["result"])  # type: ignore[index]


async def test_the_identity_provider_behind_the_company_ca_is_reached_with_the_servers_ca_bundle(
    idp_behind_ca: IdpBehindCa,
) -> None:
    spec = _id_jag_spec(idp_behind_ca, TlsSettings(ca_bundle=str(idp_behind_ca.ca)))
    assert await _whoami(spec) == "ada@example.com"


async def test_without_the_ca_bundle_the_identity_providers_certificate_is_refused_by_name(
    idp_behind_ca: IdpBehindCa,
) -> None:
    with pytest.raises(ServerConnectError) as failed:
        await _whoami(_id_jag_spec(idp_behind_ca, TlsSettings()))
    assert "was not issued by a trusted CA" in str(failed.value)
    assert "127.0.0.1" in str(failed.value) and "CA bundle" in (failed.value.hint or "")


def _config_file(tmp_path: Path, url: str) -> str:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"secure": {"url": url}}}))
    return str(path)


def test_the_cli_tls_options_apply_to_the_https_servers_of_config(
    tls_urls: dict[str, str],  # noqa: F811
    pki: Pki,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _config_file(tmp_path, tls_urls["good"])
    code, _, err = run_cli(capsys, "tools", "--config", config)
    assert code != 0 and "was not issued by a trusted CA" in err
    code, out, _ = run_cli(capsys, "tools", "--config", config, "--ca-bundle", str(pki.ca))
    assert code == 0 and "echo" in out


def test_the_cli_insecure_option_applies_to_config_servers_with_its_warning(
    tls_urls: dict[str, str],  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, "tools", "--config", _config_file(tmp_path, tls_urls["wrong-name"]), "--insecure")
    assert code == 0 and "echo" in out and "--insecure: the server's certificate is not checked" in err


def test_the_cli_says_insecure_once_however_many_servers_it_covers(
    tls_urls: dict[str, str],  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given an agent over an https MCP server and an https API's document, both reached with --insecure
    source = f"{tls_urls['api']}/openapi.json"
    agent = ["agent", tls_urls["wrong-name"], "--openapi", source, "--insecure", "--model", "m", "--prompt", "hi"]
    # When it runs (its chat model is nowhere, so it stops once the tools are listed), then the warning is printed
    # once, not once per server and document the options apply to
    code, _, err = run_cli(capsys, *agent, "--base-url", "http://127.0.0.1:1/v1")
    assert code != 0
    assert err.count("--insecure: the server's certificate is not checked") == 1, err
