"""Path settings given as ``${VAR}`` (CA bundle, client certificate and key, workload identity token file): a file
that does not exist is named by the setting as written, never by the variable's value, which may be a secret put in
the wrong variable (a token instead of the path of its file)."""

from __future__ import annotations

import anyio
import pytest

from cli_runs import run_cli
from knime_mcp.auth.workload_identity import token_file_source
from knime_mcp.errors import ConfigError, ServerAuthError

CANARY = "/run/secrets/eyJhbGciOiJIUzI1NiJ9-path-canary-7c1d"
"""What the variable holds: a value that must never be shown."""


@pytest.fixture(autouse=True)
def path_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH_SETTING", CANARY)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--ca-bundle", "${PATH_SETTING}"], "CA bundle"),
        (["--client-cert", "${PATH_SETTING}"], "client certificate"),
        (["--client-cert", __file__, "--client-key", "${PATH_SETTING}"], "client key"),
    ],
    ids=["ca bundle", "client certificate", "client key"],
)
def test_a_missing_tls_file_from_a_variable_is_named_by_the_variable(
    capsys: pytest.CaptureFixture[str], options: list[str], named: str
) -> None:
    # When the CLI connects to an https server with a TLS file setting whose variable names no file
    code, out, err = run_cli(capsys, "tools", "https://127.0.0.1:1/mcp", *options)
    # Then the error names the setting and the variable, never the variable's value
    assert code == 3 and f"{named} file" in err and "${PATH_SETTING}" in err, err
    assert CANARY not in out + err


def test_a_missing_workload_identity_token_file_from_a_variable_is_named_by_the_variable() -> None:
    read = token_file_source("${PATH_SETTING}", server="s")
    with pytest.raises(ServerAuthError, match="does not exist") as raised:
        anyio.run(read, "aud", "res")
    assert "${PATH_SETTING}" in str(raised.value) and CANARY not in str(raised.value) + str(raised.value.hint)


def test_a_path_written_out_is_still_shown_as_the_path(tmp_path: object) -> None:
    from knime_mcp.config import DEFAULT_TLS, TlsSettings
    from knime_mcp.net.tls import ssl_context

    missing = f"{tmp_path}/missing.pem"
    with pytest.raises(ConfigError, match="missing.pem"):
        ssl_context(TlsSettings(ca_bundle=missing), None, "s")
    assert ssl_context(DEFAULT_TLS, None, "s") is not None
