"""Server descriptions: JSON round trips, secrets held only by reference, and fast failures naming what is missing."""

from __future__ import annotations

import pytest

from knime_mcp import AuthRef, ServerSpec, Timeouts
from knime_mcp.config import expand_env, resolve_env, resolve_headers
from knime_mcp.errors import ConfigError
from knime_mcp.mcp.transports import candidate_transports


def test_server_spec_round_trips_through_json() -> None:
    spec = ServerSpec(
        target="https://example.com/mcp",
        transport="streamable-http",
        name="example",
        headers={"X-Team": "data", "X-Key": "${KEY}"},
        auth=AuthRef(kind="header", credential="example-key", header="X-API-Key"),
        timeouts=Timeouts(connect=5.0, call=12.5),
    )
    assert ServerSpec.from_json(spec.to_json()) == spec
    assert hash(ServerSpec.from_json(spec.to_json())) == hash(spec)


def test_a_literal_secret_is_refused_so_settings_never_hold_one() -> None:
    with pytest.raises(ConfigError, match="environment reference"):
        AuthRef(kind="bearer", secret="sk-live-123")


def test_a_password_in_the_url_is_refused() -> None:
    with pytest.raises(ConfigError, match="contains a password") as caught:
        ServerSpec(target="https://user:hunter2@example.com/mcp")
    assert "hunter2" not in str(caught.value)


def test_display_name_never_shows_url_userinfo_or_query() -> None:
    assert ServerSpec(target="https://user@example.com:8443/mcp?key=1").display_name == "https://example.com:8443/mcp"


def test_missing_env_var_error_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KNIME_MCP_ABSENT", raising=False)
    with pytest.raises(ConfigError, match="KNIME_MCP_ABSENT"):
        expand_env("Bearer ${KNIME_MCP_ABSENT}")


def test_headers_and_environment_resolve_references_at_connect_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KNIME_MCP_TOKEN", "t0k3n")
    spec = ServerSpec(
        target="server --stdio", env={"TOKEN": "${KNIME_MCP_TOKEN}"}, headers={"X-Key": "k-${KNIME_MCP_TOKEN}"}
    )
    assert resolve_env(spec) == {"TOKEN": "t0k3n"}
    assert resolve_headers(spec) == {"X-Key": "k-t0k3n"}
    assert "t0k3n" not in spec.to_json()


def test_an_unknown_credential_is_a_config_error_naming_it() -> None:
    def lookup(name: str) -> tuple[str, str]:
        raise KeyError(name)

    spec = ServerSpec(target="https://example.com/mcp", auth=AuthRef(kind="bearer", credential="missing-cred"))
    with pytest.raises(ConfigError, match="missing-cred"):
        resolve_headers(spec, lookup)


def test_auth_needs_exactly_one_secret_source() -> None:
    with pytest.raises(ConfigError, match="exactly one"):
        AuthRef(kind="bearer")
    with pytest.raises(ConfigError, match="exactly one"):
        AuthRef(kind="bearer", credential="a", secret="${B}")


@pytest.mark.parametrize(
    ("target", "transport", "expected"),
    [
        ("http://h/sse", "auto", ("sse",)),
        ("http://h/sse/?x=1", "auto", ("sse",)),
        ("http://h/mcp", "auto", ("streamable-http", "sse")),
        ("npx server", "auto", ("stdio",)),
        ("http://h/mcp", "sse", ("sse",)),
    ],
)
def test_auto_transport_is_chosen_from_the_target(target: str, transport: str, expected: tuple[str, ...]) -> None:
    assert tuple(candidate_transports(ServerSpec(target=target, transport=transport))) == expected  # type: ignore[arg-type]


def test_http_transports_refuse_a_command_line() -> None:
    with pytest.raises(ConfigError, match="needs an http"):
        ServerSpec(target="npx server", transport="sse")


def test_timeouts_must_be_positive() -> None:
    with pytest.raises(ConfigError):
        Timeouts(connect=0)


@pytest.mark.parametrize(
    "headers",
    [{"Authorization": "Bearer abc123"}, {"X-API-Key": "abc123"}, {"Cookie": "session=abc123"}],
)
def test_a_credential_header_written_out_is_refused_so_no_secret_sits_in_settings(headers: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="holds a literal secret") as refused:
        ServerSpec(target="http://127.0.0.1:9/mcp", headers=headers)
    assert "abc123" not in str(refused.value)


def test_credential_headers_referencing_the_environment_and_plain_headers_are_kept() -> None:
    headers = {"Authorization": "Bearer ${TOKEN}", "X-Request-Source": "knime"}
    assert ServerSpec(target="http://127.0.0.1:9/mcp", headers=headers).headers == headers
