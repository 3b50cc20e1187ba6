"""``servers search``, ``servers show`` and ``connect`` with ``--registry`` of an organisation's registry over https
under its own CA (made by trustme): the CLI's TLS options (``--ca-bundle``, ``--insecure``) reach the registry, and
``connect`` lists the tools of a remote it lists over https with them too. The stand-in registry
(tests/servers/registry_server.py) and the demo server (tests/servers/tls_server.py) under the CA's certificates, on
127.0.0.1."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from cli_runs import run_cli
from fixtures.python_servers import SERVERS_DIR, running_server
from test_tls import Pki, no_ca_from_environment, pki, tls_urls  # noqa: F401 (fixtures)

DEMO = "io.github.knime-mcp-tests/demo"
"""The registry's remote entry: the demo server, at the https URL the stand-in is given."""


@pytest.fixture(scope="module")
def https_registry(pki: Pki, tls_urls: dict[str, str]) -> Iterator[str]:  # noqa: F811 (fixtures)
    """`https://127.0.0.1:<port>`: the stand-in registry under the test CA's certificate, its remote entry pointing
    at the demo server over https under the same CA."""
    folder = pki.ca.parent
    env = {"REGISTRY_CERT": str(folder / "good.pem"), "REGISTRY_DEMO_URL": tls_urls["good"]}
    command = [sys.executable, str(SERVERS_DIR / "registry_server.py")]
    with running_server(command, folder / "registry.log", env) as server:
        yield server.url


def test_servers_search_and_show_read_a_registry_under_a_private_ca_with_ca_bundle(
    capsys: pytest.CaptureFixture[str],
    https_registry: str,
    pki: Pki,  # noqa: F811 (fixtures)
) -> None:
    assert https_registry.startswith("https://")
    # Given the registry's CA named with --ca-bundle, the registry's servers are listed beside the presets
    trusted = ("--registry", https_registry, "--ca-bundle", str(pki.ca))
    code, out, err = run_cli(capsys, "servers", "search", "time", *trusted)
    assert code == 0 and err == ""
    assert ["io.github.domdomegg/time-mcp-pypi", "1.0.6", "registry"] in [line.split()[:3] for line in out.splitlines()]
    # And one entry is shown
    code, out, err = run_cli(capsys, "servers", "show", DEMO, *trusted)
    assert code == 0, err
    assert out.startswith(f"{DEMO}@") and f"registry {https_registry}" in out


def test_without_the_ca_the_registry_is_not_read_and_insecure_reads_it_with_a_warning(
    capsys: pytest.CaptureFixture[str], https_registry: str
) -> None:
    # Given no CA: the search says the registry could not be read, for its certificate, and lists the presets only
    code, out, err = run_cli(capsys, "servers", "search", "time", "--registry", https_registry)
    assert code == 0 and "the registry could not be read" in err and "certificate" in err
    assert "time-mcp-pypi" not in out
    # And show fails, naming the certificate
    code, _, err = run_cli(capsys, "servers", "show", DEMO, "--registry", https_registry)
    assert code != 0 and "certificate" in err
    # And --insecure reads it, saying the certificate is not checked
    code, out, err = run_cli(capsys, "servers", "search", "time", "--registry", https_registry, "--insecure")
    assert code == 0 and "time-mcp-pypi" in out and "Warning: --insecure" in err


def test_connect_reads_the_registry_and_lists_its_https_remote_with_ca_bundle(
    capsys: pytest.CaptureFixture[str],
    https_registry: str,
    tls_urls: dict[str, str],  # noqa: F811 (fixtures)
    pki: Pki,  # noqa: F811 (fixtures)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the registry's remote entry (the demo server over https under the same CA) and its header's value
    monkeypatch.setenv("DEMO_KEY", "demo-key-value-0123456789")
    argv = ("connect", DEMO, "--registry", https_registry, "--env", "X-API-Key=${DEMO_KEY}")
    # When connect runs with the CA bundle
    code, out, err = run_cli(capsys, *argv, "--ca-bundle", str(pki.ca))
    # Then the entry was read from the registry and the remote's tools listed over https
    assert code == 0, err
    assert f'"url": "{tls_urls["good"]}"' in out and "echo" in out
