"""The SSRF guard for servers taken from data: only http(s) URLs, and only public addresses; no command lines.

Only literal addresses, `localhost` and `nonexistent.invalid` are used, so no test depends on a public DNS answer.
"""

from __future__ import annotations

import socket

import anyio
import pytest

from knime_mcp.config import ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.net.urlguard import PinnedHost, check_server, check_url

pytestmark = pytest.mark.anyio


@pytest.fixture
def no_lookups(monkeypatch: pytest.MonkeyPatch) -> None:
    async def refuse(*args: object, **kwargs: object) -> list[tuple[object, ...]]:
        raise AssertionError("the guard looked the name up")

    monkeypatch.setattr(anyio, "getaddrinfo", refuse)


@pytest.mark.parametrize(
    "url",
    ["http://8.8.8.8/mcp", "https://1.1.1.1:8443/sse", "https://[2606:4700:4700::1111]/mcp", "HTTPS://9.9.9.9"],
)
async def test_a_url_whose_host_is_a_public_address_passes(url: str) -> None:
    pin = await check_url(url)
    assert pin.address in url.lower() and pin.host == pin.address


async def test_a_checked_name_is_pinned_to_its_first_public_address(monkeypatch: pytest.MonkeyPatch) -> None:
    async def two_public(host: str, port: int, **kwargs: object) -> list[tuple[object, ...]]:
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("2606:4700:4700::1111", port, 0, 0)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("1.1.1.1", port)),
        ]

    monkeypatch.setattr(anyio, "getaddrinfo", two_public)

    assert await check_url("https://tools.example/mcp") == PinnedHost("tools.example", "2606:4700:4700::1111")


@pytest.mark.parametrize(
    ("url", "address", "kind"),
    [
        ("http://localhost:8000/mcp", "127.0.0.1", "a loopback address"),
        ("http://127.0.0.1/", "127.0.0.1", "a loopback address"),
        ("http://127.1/", "127.0.0.1", "a loopback address"),
        ("http://0x7f000001/", "127.0.0.1", "a loopback address"),
        ("http://2130706433/", "127.0.0.1", "a loopback address"),
        ("http://0177.0.0.1/", "127.0.0.1", "a loopback address"),
        ("http://[::1]/", "::1", "a loopback address"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:7f00:1", "a loopback address (IPv4 127.0.0.1 inside IPv6)"),
        ("http://[64:ff9b::7f00:1]/", "64:ff9b::7f00:1", "a loopback address (IPv4 127.0.0.1 inside IPv6)"),
        ("http://[2002:a00:1::]/", "2002:a00:1::", "a private address (IPv4 10.0.0.1 inside IPv6)"),
        ("http://10.0.0.1/", "10.0.0.1", "a private address"),
        ("http://172.16.5.4/", "172.16.5.4", "a private address"),
        ("http://192.168.1.1/", "192.168.1.1", "a private address"),
        ("http://[fc00::1]/", "fc00::1", "a private address"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254", "a link-local address"),
        ("http://[fe80::1]/", "fe80::1", "a link-local address"),
        ("http://224.0.0.1/", "224.0.0.1", "a multicast address"),
        ("http://[ff02::1]/", "ff02::1", "a multicast address"),
        ("http://0.0.0.0:8000/", "0.0.0.0", "an unspecified address"),
        ("http://[::]/", "::", "an unspecified address"),
        ("http://240.0.0.1/", "240.0.0.1", "a private address"),
        ("http://100.64.0.1/", "100.64.0.1", "a non-public address"),
    ],
)
async def test_a_url_pointing_inside_the_network_is_refused_naming_the_address(
    url: str, address: str, kind: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        await check_url(url, hint="Trust the table if you must.")

    message = str(caught.value)
    assert f"points to {address}, {kind}; URLs taken from data may reach only public internet addresses." in message
    assert message.endswith("Hint: Trust the table if you must.")


async def test_every_resolved_address_must_be_public_not_just_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    async def two_addresses(host: str, port: int, **kwargs: object) -> list[tuple[object, ...]]:
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("8.8.8.8", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", port)),
        ]

    monkeypatch.setattr(anyio, "getaddrinfo", two_addresses)

    with pytest.raises(ConfigError, match="points to 10.1.2.3, a private address"):
        await check_url("https://rebinding.example/mcp")


async def test_a_server_command_line_from_data_is_refused_with_the_callers_hint() -> None:
    with pytest.raises(ConfigError) as caught:
        await check_server(ServerSpec(target="rm -rf ~"), hint="Trust the table if you must.")

    assert str(caught.value) == (
        "A server command line taken from data was refused: it would start a program on this machine. "
        "[server: rm -rf ~] Hint: Trust the table if you must."
    )


@pytest.mark.parametrize(
    "spec",
    [
        ServerSpec(target="http://1.2.3.4/mcp --x", transport="stdio", cwd="/tmp"),
        ServerSpec(target="https://8.8.8.8/mcp", transport="stdio"),
    ],
)
async def test_a_url_run_over_stdio_is_judged_as_the_command_line_it_is(spec: ServerSpec, no_lookups: None) -> None:
    with pytest.raises(ConfigError, match="A server command line taken from data was refused"):
        await check_server(spec, hint="Trust it.")


async def test_a_server_from_data_asking_for_a_secret_is_refused_without_a_lookup(no_lookups: None) -> None:
    spec = ServerSpec(target="https://8.8.8.8/mcp", headers={"X-Trace": "${HOME}"})

    with pytest.raises(ConfigError) as caught:
        await check_server(spec, hint="Trust it.")

    assert str(caught.value) == (
        "A server taken from data was refused: it asks for the environment variable HOME in its header 'X-Trace', "
        "and secrets of this machine are sent only to servers a person configured here. "
        "[server: https://8.8.8.8/mcp] Hint: Trust it."
    )


async def test_a_server_url_from_data_gets_the_url_check() -> None:
    with pytest.raises(ConfigError, match="points to 169.254.169.254, a link-local address"):
        await check_server(ServerSpec(target="http://169.254.169.254/latest"), hint="Trust it.")
    await check_server(ServerSpec(target="https://8.8.8.8/mcp"), hint="Trust it.")


@pytest.mark.parametrize(
    ("url", "scheme"),
    [
        ("file:///etc/passwd", "the scheme 'file'"),
        ("ftp://8.8.8.8/data", "the scheme 'ftp'"),
        ("gopher://127.0.0.1:6379/_FLUSHALL", "the scheme 'gopher'"),
        ("javascript:alert(1)", "the scheme 'javascript'"),
        ("//8.8.8.8/mcp", "no scheme"),
    ],
)
async def test_a_scheme_other_than_http_or_https_is_refused_before_any_lookup(
    url: str, scheme: str, no_lookups: None
) -> None:
    with pytest.raises(ConfigError) as caught:
        await check_url(url)

    assert f"A URL with {scheme} was refused; only http and https URLs are accepted from data." in str(caught.value)


async def test_the_message_shows_neither_userinfo_nor_path_nor_query_of_the_url() -> None:
    with pytest.raises(ConfigError) as caught:
        await check_url("http://alice:hunter2@127.0.0.1:9000/t0ken-path?key=s3cret")

    message = str(caught.value)
    assert message.startswith("The URL http://127.0.0.1:9000 points to 127.0.0.1")
    assert not [secret for secret in ("alice", "hunter2", "t0ken", "s3cret") if secret in message]


async def test_a_host_that_does_not_resolve_is_refused_with_a_clear_message() -> None:
    with pytest.raises(ConfigError) as caught:
        await check_url("https://nonexistent.invalid/mcp")

    assert str(caught.value) == (
        "The host of the URL https://nonexistent.invalid could not be resolved. Hint: Check the host name in the URL."
    )


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http:///mcp", "The URL http:// has no host name."),
        ("http://8.8.8.8:99999/", "The URL http://8.8.8.8 has an invalid port."),
        ("http://[::1/mcp", "A URL taken from data is malformed."),
    ],
)
async def test_a_malformed_url_is_refused_without_a_lookup(url: str, problem: str, no_lookups: None) -> None:
    with pytest.raises(ConfigError, match=problem.replace(".", r"\.").replace("[", r"\[")):
        await check_url(url)
