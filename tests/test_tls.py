"""Enterprise TLS: a CA made by trustme, HTTPS MCP servers and an HTTPS OpenAPI API under its certificates.

One server process (tests/servers/tls_server.py) serves the demo MCP server under a good, an expired and a wrong-name
certificate, one that requires a client certificate, and the pet store test API; the tests connect with the
settings of :class:`~knime_mcp.config.TlsSettings` and read the errors without them.
"""

from __future__ import annotations

import datetime
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import anyio
import pytest
import trustme

from fixtures.processes import spawn, stop, wait_until
from knime_mcp.calls.listing import list_http_tools
from knime_mcp.config import ServerSpec, TlsSettings
from knime_mcp.errors import ConfigError, ServerConnectError
from knime_mcp.mcp.sync import SyncMcpClient
from knime_mcp.net.http_pool import HttpPool

SERVER_SCRIPT = Path(__file__).parent / "servers" / "tls_server.py"
_LINE = re.compile(r"TLS test server (\S+) listening on (\S+)")
_PAST = datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class Pki:
    """The PEM files of a test CA: its certificate, and a client certificate with its key (also encrypted)."""

    ca: Path
    client_cert: Path
    client_key: Path
    other_ca: Path
    """A CA nobody here issued from: trusting it only trusts none of the servers."""


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    ca.issue_cert("127.0.0.1").private_key_and_cert_chain_pem.write_to_path(str(folder / "good.pem"))
    expired = ca.issue_cert("127.0.0.1", not_before=_PAST - datetime.timedelta(days=30), not_after=_PAST)
    expired.private_key_and_cert_chain_pem.write_to_path(str(folder / "expired.pem"))
    ca.issue_cert("example.org").private_key_and_cert_chain_pem.write_to_path(str(folder / "wrong-name.pem"))
    client = ca.issue_cert("knime-mcp-client@example.org")
    client.cert_chain_pems[0].write_to_path(str(folder / "client.crt"))
    client.private_key_pem.write_to_path(str(folder / "client.key"))
    trustme.CA().cert_pem.write_to_path(str(folder / "other-ca.pem"))
    return Pki(folder / "ca.pem", folder / "client.crt", folder / "client.key", folder / "other-ca.pem")


@pytest.fixture(scope="module")
def tls_urls(pki: Pki) -> Iterator[dict[str, str]]:
    """Each server's name (good, expired, wrong-name, client-cert, client-cert-silent, api) to its https URL on
    127.0.0.1."""
    log = pki.ca.parent / "server.log"
    process = spawn([sys.executable, str(SERVER_SCRIPT), str(pki.ca.parent)], log)
    try:
        yield wait_until(process, lambda: _urls(log), log, "the TLS test server")
    finally:
        stop(process)


def _urls(log: Path) -> dict[str, str] | None:
    found = dict(_LINE.findall(log.read_text(errors="replace")))
    return found if len(found) == 6 else None


@pytest.fixture(autouse=True)
def no_ca_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "SSL_CERT_DIR"):
        monkeypatch.delenv(variable, raising=False)


def _echo(spec: ServerSpec) -> str:
    """List the server's tools and call its echo tool: the text it answered."""
    with SyncMcpClient(spec) as client:
        assert "echo" in {tool.name for tool in client.list_tools()}
        return client.call_tool("echo", {"text": "over TLS"}).text


def _refusal(spec: ServerSpec) -> ServerConnectError:
    with pytest.raises(ServerConnectError) as caught:
        _echo(spec)
    return caught.value


def test_a_server_under_a_private_ca_is_listed_and_called_with_the_ca_bundle(
    tls_urls: dict[str, str], pki: Pki
) -> None:
    spec = ServerSpec(target=tls_urls["good"], tls=TlsSettings(ca_bundle=str(pki.ca)))
    assert _echo(spec) == "over TLS"


def test_without_the_ca_the_error_names_the_host_the_unknown_issuer_and_the_setting(tls_urls: dict[str, str]) -> None:
    error = _refusal(ServerSpec(target=tls_urls["good"]))
    assert "127.0.0.1" in str(error) and "unknown issuer" in str(error)
    assert "CA bundle" in error.hint and "system trust store" in error.hint


def test_an_expired_certificate_says_so(tls_urls: dict[str, str], pki: Pki) -> None:
    error = _refusal(ServerSpec(target=tls_urls["expired"], tls=TlsSettings(ca_bundle=str(pki.ca))))
    assert "127.0.0.1" in str(error) and "expired" in str(error)


def test_a_certificate_for_another_name_says_so(tls_urls: dict[str, str], pki: Pki) -> None:
    error = _refusal(ServerSpec(target=tls_urls["wrong-name"], tls=TlsSettings(ca_bundle=str(pki.ca))))
    assert "wrong name" in str(error) and "127.0.0.1" in str(error)


def test_a_ca_bundle_given_as_a_variable_is_read_at_connect_time(
    tls_urls: dict[str, str], pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPANY_CA", str(pki.ca))
    spec = ServerSpec(target=tls_urls["good"], tls=TlsSettings(ca_bundle="${COMPANY_CA}"))
    assert "COMPANY_CA" in spec.to_json() and str(pki.ca) not in spec.to_json()
    assert _echo(spec) == "over TLS"


@pytest.mark.parametrize("variable", ["SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"])
def test_the_environment_names_the_ca_when_no_bundle_is_set(
    tls_urls: dict[str, str], pki: Pki, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, str(pki.ca))
    assert _echo(ServerSpec(target=tls_urls["good"])) == "over TLS"


def test_a_ca_bundle_setting_wins_over_the_environment(
    tls_urls: dict[str, str], pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(pki.ca))
    error = _refusal(ServerSpec(target=tls_urls["good"], tls=TlsSettings(ca_bundle=str(pki.other_ca))))
    assert "unknown issuer" in str(error)


def test_the_system_trust_store_is_used(tls_urls: dict[str, str], pki: Pki, monkeypatch: pytest.MonkeyPatch) -> None:
    """On Linux, truststore trusts OpenSSL's default locations, which SSL_CERT_FILE moves: pointed at the test CA,
    the system store trusts the server; pointed at another CA, it does not."""
    spec = ServerSpec(target=tls_urls["good"], tls=TlsSettings(system_trust=True))
    monkeypatch.setenv("SSL_CERT_FILE", str(pki.ca))
    assert _echo(spec) == "over TLS"
    monkeypatch.setenv("SSL_CERT_FILE", str(pki.other_ca))
    assert "unknown issuer" in str(_refusal(spec))


def test_a_server_requiring_a_client_certificate_accepts_the_configured_one(tls_urls: dict[str, str], pki: Pki) -> None:
    tls = TlsSettings(ca_bundle=str(pki.ca), client_cert=str(pki.client_cert), client_key=str(pki.client_key))
    assert _echo(ServerSpec(target=tls_urls["client-cert"], tls=tls)) == "over TLS"


def test_without_a_client_certificate_the_error_says_one_is_required(tls_urls: dict[str, str], pki: Pki) -> None:
    error = _refusal(ServerSpec(target=tls_urls["client-cert"], tls=TlsSettings(ca_bundle=str(pki.ca))))
    assert "client certificate" in str(error) and "Client certificate" in error.hint


@pytest.mark.parametrize("options", [[], ["--call-timeout", "30"]], ids=["list", "call"])
def test_a_server_that_drops_a_client_without_a_certificate_is_said_to_require_one(
    capsys: pytest.CaptureFixture[str], tls_urls: dict[str, str], pki: Pki, options: list[str]
) -> None:
    """uvicorn's own TLS closes the connection without the alert that says why: the client saw the server ask for a
    certificate in the handshake, so it says so, rather than that the server disconnected."""
    from cli_runs import run_cli

    url = tls_urls["client-cert-silent"]
    error = _refusal(ServerSpec(target=url, tls=TlsSettings(ca_bundle=str(pki.ca))))
    assert "requires a client certificate" in str(error) and "Client certificate" in error.hint
    command = ["call", url, "echo", "--args", '{"text": "hi"}'] if options else ["tools", url]
    code, _, err = run_cli(capsys, *command, *options, "--ca-bundle", str(pki.ca))
    assert code == 3 and "requires a client certificate" in err and "--client-cert" in err, err
    assert "server is running" not in err and "Set Client certificate" not in err


def test_a_missing_ca_bundle_file_is_a_configuration_error(tls_urls: dict[str, str], pki: Pki) -> None:
    missing = pki.ca.parent / "missing.pem"
    with pytest.raises(ConfigError, match="CA bundle file .*missing.pem"):
        _echo(ServerSpec(target=tls_urls["good"], tls=TlsSettings(ca_bundle=str(missing))))


def test_an_openapi_api_over_https_is_read_and_called_with_the_ca_bundle(tls_urls: dict[str, str], pki: Pki) -> None:
    from knime_mcp.calls.dispatch import Dispatcher
    from knime_mcp.calls.pool import ClientPool

    tls = TlsSettings(ca_bundle=str(pki.ca))

    async def list_and_call() -> str:
        listing = await list_http_tools(f"{tls_urls['api']}/openapi.json", tls=tls)
        assert listing.tools and all(tool.server.tls == tls for tool in listing.tools)
        list_pets = next(tool for tool in listing.tools if tool.name == "listPets")
        async with ClientPool(check_unsealed=True) as pool:  # sealed by the listing: a person chose the document
            outcome = await Dispatcher(pool).call(list_pets, {"limit": 3})
        outcome.raise_for_error()
        assert outcome.result is not None
        return outcome.result.text

    assert json.loads(anyio.run(list_and_call))["limit"] == 3


def test_an_openapi_document_over_https_without_the_ca_names_the_setting(tls_urls: dict[str, str]) -> None:
    with pytest.raises(ServerConnectError, match="unknown issuer") as caught:
        anyio.run(lambda: list_http_tools(f"{tls_urls['api']}/openapi.json"))
    assert "CA bundle" in caught.value.hint


def test_servers_with_default_tls_share_one_transport_and_other_settings_get_their_own(pki: Pki) -> None:
    import httpx2

    async def routes() -> list[object]:
        pool = HttpPool()
        try:
            url = httpx2.URL("https://127.0.0.1/")
            custom = TlsSettings(ca_bundle=str(pki.ca))
            pool.transport(tls=custom)
            return [
                pool.route(url),
                pool.route(url),
                pool.route(url, custom),
                pool.route(url, TlsSettings(ca_bundle=str(pki.ca))),
            ]
        finally:
            await pool.aclose()

    first, second, custom, same_custom = anyio.run(routes)
    assert first is second and custom is same_custom and custom is not first


def test_tls_settings_are_left_out_of_the_json_when_default_and_part_of_the_identity_when_set(pki: Pki) -> None:
    plain = ServerSpec(target="https://example.com/mcp")
    assert "tls" not in plain.to_json()
    custom = ServerSpec(target="https://example.com/mcp", tls=TlsSettings(ca_bundle="${CA}"))
    assert ServerSpec.from_json(custom.to_json()) == custom and custom != plain
    assert '"tls":{"ca_bundle":"${CA}"}' in custom.to_json()


def test_a_literal_key_passphrase_is_refused() -> None:
    with pytest.raises(ConfigError, match="environment reference"):
        TlsSettings(client_cert="/c.pem", key_secret="hunter2")


@pytest.mark.parametrize(
    ("tls", "refusal"),
    [
        (TlsSettings(verify=False), "turns certificate checks off"),
        (TlsSettings(client_cert="/home/me/client.pem"), "client certificate"),
        (TlsSettings(ca_bundle="${COMPANY_CA}"), "CA bundle"),
    ],
)
def test_a_server_from_data_may_not_change_the_certificate_checks(tls: TlsSettings, refusal: str) -> None:
    """A tools table anyone can write cannot turn checks off, show this machine's client certificate, or read its
    files: the spec is refused before any connection (example.com would pass the address checks)."""
    from knime_mcp.calls.pool import ClientPool

    async def connect() -> None:
        async with ClientPool(check_unsealed=True) as pool:
            await pool.client(ServerSpec(target="https://example.com/mcp", tls=tls))

    with pytest.raises(ConfigError, match="taken from data was refused") as refused:
        anyio.run(connect)
    assert refusal in str(refused.value) and "Provider" in refused.value.hint


def test_a_person_may_skip_the_checks_of_a_server_with_a_warning_in_the_log(
    tls_urls: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    from knime_mcp.seal import seal_spec

    spec = seal_spec(ServerSpec(target=tls_urls["good"], tls=TlsSettings(verify=False)))
    with caplog.at_level("WARNING", logger="knime_mcp.net.tls"):
        assert _echo(spec) == "over TLS"
    assert any("Certificate checks are off" in record.getMessage() for record in caplog.records)


def test_the_cli_calls_a_server_with_a_ca_bundle_and_a_client_certificate(
    capsys: pytest.CaptureFixture[str], tls_urls: dict[str, str], pki: Pki
) -> None:
    from cli_runs import run_cli

    tls = ["--ca-bundle", str(pki.ca), "--client-cert", str(pki.client_cert), "--client-key", str(pki.client_key)]
    code, out, _ = run_cli(capsys, "call", tls_urls["client-cert"], "echo", "--args", '{"text": "hi"}', *tls)
    assert code == 0 and json.loads(out)["content"][0]["text"] == "hi"
    code, _, err = run_cli(capsys, "call", tls_urls["good"], "echo", "--args", '{"text": "hi"}')
    assert code == 3 and "unknown issuer" in err


def test_the_cli_skips_the_checks_only_with_insecure_and_says_so(
    capsys: pytest.CaptureFixture[str], tls_urls: dict[str, str]
) -> None:
    from cli_runs import run_cli

    code, out, err = run_cli(capsys, "call", tls_urls["wrong-name"], "echo", "--args", '{"text": "hi"}', "--insecure")
    assert code == 0 and json.loads(out)["content"][0]["text"] == "hi"
    assert "--insecure: the server's certificate is not checked" in err


def test_the_cli_lists_an_https_api_with_a_ca_bundle(
    capsys: pytest.CaptureFixture[str], tls_urls: dict[str, str], pki: Pki
) -> None:
    from cli_runs import run_cli

    source = f"{tls_urls['api']}/openapi.json"
    code, out, err = run_cli(capsys, "http-tools", source, "--ca-bundle", str(pki.ca), "--format", "json")
    assert code == 0, err
    assert '"ca_bundle"' in out


def _encrypted_key(pki: Pki, passphrase: str) -> Path:
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(pki.client_key.read_bytes(), password=None)
    path = pki.ca.parent / "client-encrypted.key"
    encryption = serialization.BestAvailableEncryption(passphrase.encode())
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption))
    return path


def test_an_encrypted_client_key_is_opened_with_its_passphrase_from_a_variable(
    tls_urls: dict[str, str], pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = _encrypted_key(pki, "correct horse")
    tls = TlsSettings(ca_bundle=str(pki.ca), client_cert=str(pki.client_cert), client_key=str(key))
    monkeypatch.setenv("KEY_PASSPHRASE", "correct horse")
    spec = ServerSpec(target=tls_urls["client-cert"], tls=replace(tls, key_secret="${KEY_PASSPHRASE}"))
    assert _echo(spec) == "over TLS"
    monkeypatch.setenv("KEY_PASSPHRASE", "wrong battery")
    with pytest.raises(ConfigError, match="passphrase is missing or wrong") as wrong:
        _echo(spec)
    assert "wrong battery" not in str(wrong.value)
    with pytest.raises(ConfigError, match="passphrase is missing or wrong"):  # never a prompt on the terminal
        _echo(ServerSpec(target=tls_urls["client-cert"], tls=tls))


def test_an_unreadable_ca_file_from_the_environment_names_the_variables(
    tls_urls: dict[str, str], pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(pki.client_key))  # a key, not certificates
    with pytest.raises(ConfigError, match="cannot be read") as caught:
        _echo(ServerSpec(target=tls_urls["good"]))
    assert "REQUESTS_CA_BUNDLE" in caught.value.hint
