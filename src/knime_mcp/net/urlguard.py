"""SSRF guard for servers that come from data rather than from a person's settings.

A server URL read from a table or a flow variable may point at this machine or the local network (a cloud metadata
service, an admin console). Before such a server is connected, this module checks it: http or https only, every
address its host resolves to public, and no command line. It sits beside :mod:`knime_mcp.config` and below the
pool; it opens no connection, it only resolves the name. The address it checked is pinned: the transport sends every
request of the session there, so a second, different DNS answer (rebinding) cannot lead elsewhere.

    pin = await check_url("https://tools.example.com/mcp")   # PinnedHost("tools.example.com", "93.184.216.34")
    await check_url("http://169.254.169.254/latest")          # ConfigError: a link-local address
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, parse_qsl, urlsplit

import anyio

from knime_mcp.config import ENV_REF, ServerSpec
from knime_mcp.errors import ConfigError

__all__ = ["ALLOWED_SCHEMES", "PinnedHost", "check_discovery", "check_server", "check_url", "origin_of", "shown_url"]

ALLOWED_SCHEMES = frozenset({"http", "https"})

_Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_FULL_URL_HINT = "Give a full URL such as https://example.com/mcp."
_HOST_HINT = "Check the host name in the URL."


@dataclass(frozen=True)
class PinnedHost:
    """A checked host name and the checked address that its requests go to instead of a new DNS answer."""

    host: str
    address: str


async def check_server(spec: ServerSpec, *, hint: str) -> PinnedHost:
    """Refuse a server taken from data unless it is an http(s) URL whose every address is public and that asks for
    no secret of this machine; a command line is never run. ``hint`` tells the user how to allow the server if they
    trust it.

    The spec is judged as it will be used: with transport ``stdio`` even a target that starts like a URL is a
    command line (as :func:`knime_mcp.mcp.transports.candidate_transports` reads it), run with the data's arguments,
    folder and environment."""
    if spec.transport == "stdio" or not spec.is_url:
        raise ConfigError(
            "A server command line taken from data was refused: it would start a program on this machine.",
            server=spec.display_name,
            hint=hint,
        )
    if changed := _tls_asked(spec):
        raise ConfigError(
            f"A server taken from data was refused: it {changed}, which only a person may set for a server.",
            server=spec.display_name,
            hint=hint,
        )
    if wanted := _secrets_asked(spec):
        raise ConfigError(
            f"A server taken from data was refused: it asks for {wanted[0]}, and secrets of this machine are sent "
            "only to servers a person configured here.",
            server=spec.display_name,
            hint=hint,
        )
    return await check_url(spec.target, hint=hint)


def _tls_asked(spec: ServerSpec) -> str | None:
    """What of this machine's TLS setup connecting to ``spec`` would change or use, in words: certificate checks
    off, its client certificate (its identity) or one of its files."""
    tls = spec.tls
    if not tls.verify:
        return "turns certificate checks off"
    if tls.client_cert:
        return "shows a client certificate of this machine"
    if tls.ca_bundle:
        return "reads a CA bundle file of this machine"
    return None


def _secrets_asked(spec: ServerSpec) -> list[str]:
    """What of this machine's secrets connecting to ``spec`` would resolve and send, in words: each ``${VAR}`` of
    its headers, environment and URL query, and its authentication (a KNIME credential or a ``${VAR}``)."""
    query = parse_qsl(urlsplit(spec.target).query)
    references = [*(("header", name, value) for name, value in spec.headers.items()),
                  *(("environment entry", name, value) for name, value in spec.env.items()),
                  *(("query parameter", name, value) for name, value in query)]  # fmt: skip
    asked = [
        f"the environment variable {variable} in its {kind} {name!r}"
        for kind, name, value in references
        for variable in ENV_REF.findall(value)
    ]
    auth = spec.auth
    if auth.credential is not None:
        asked.append(f"the KNIME credential {auth.credential!r} ({auth.kind} authentication)")
    elif auth.kind != "none":
        asked.append(f"{auth.kind} authentication")
    return asked


async def check_url(url: str, *, hint: str | None = None) -> PinnedHost:
    """The host of ``url`` pinned to its first address; a ConfigError unless ``url`` is http(s) and every address
    of its host is public.

    Messages show the URL's scheme, host and port only: a path, query or userinfo taken from data may carry a token.
    ``hint`` goes with a refused address.
    """
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError as exc:
        raise ConfigError("A URL taken from data is malformed.", hint=_FULL_URL_HINT) from exc
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        used = f"the scheme {scheme!r}" if scheme else "no scheme"
        raise ConfigError(
            f"A URL with {used} was refused; only http and https URLs are accepted from data.", hint=_FULL_URL_HINT
        )
    shown = _origin(parts)
    if not host:
        raise ConfigError(f"The URL {shown} has no host name.", hint=_FULL_URL_HINT)
    try:
        port = parts.port or _DEFAULT_PORTS[scheme]
    except ValueError as exc:
        raise ConfigError(f"The URL {shown} has an invalid port.") from exc
    addresses = await _resolve(host, port, shown)
    for address in addresses:
        kind = _non_public_kind(address)
        if kind is not None:
            raise ConfigError(
                f"The URL {shown} points to {address}, {kind}; "
                "URLs taken from data may reach only public internet addresses.",
                hint=hint,
            )
    return PinnedHost(host, str(addresses[0]))


async def _resolve(host: str, port: int, shown: str) -> list[_Address]:
    """Every address the host resolves to; numeric forms such as 127.1 or 0x7f000001 resolve without a lookup."""
    try:
        infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ConfigError(f"The host of the URL {shown} could not be resolved.", hint=_HOST_HINT) from exc
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    if not addresses:
        raise ConfigError(f"The host of the URL {shown} resolves to no address.", hint=_HOST_HINT)
    return addresses


def _non_public_kind(address: _Address) -> str | None:
    """How a non-public address is described in a message, e.g. "a loopback address"; ``None`` for a public one.

    IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4, Teredo) are judged by that IPv4 address too.
    """
    for embedded in _embedded_ipv4(address):
        kind = _non_public_kind(embedded)
        if kind is not None:
            return f"{kind} (IPv4 {embedded} inside IPv6)"
    checks = (
        (address.is_unspecified, "an unspecified address"),
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (address.is_private, "a private address"),
        (address.is_reserved, "a reserved address"),
        (not address.is_global, "a non-public address"),
    )
    return next((kind for refused, kind in checks if refused), None)


_MAY_LEAD_TO = {
    "public": {"public"},
    "private": {"public", "private"},
    "loopback": {"public", "private", "loopback"},
    "link-local": {"public", "link-local"},
}
"""Where a server at an address of each reach may send knime-mcp on (OAuth discovery): never further in than it is;
link-local addresses (cloud metadata services) only from there."""


async def check_discovery(url: str, *, server_url: str) -> PinnedHost:
    """The host of ``url``, which a person's server at ``server_url`` leads to (OAuth discovery: its
    ``resource_metadata``, its ``authorization_servers`` and their endpoints), pinned to its first address; a
    ConfigError saying where ``url`` points where that is further in than the server is (:data:`_MAY_LEAD_TO`)."""
    allowed = set(_MAY_LEAD_TO)
    for address in await _addresses(server_url):
        allowed &= _MAY_LEAD_TO[_reach(address)]
    addresses = await _addresses(url)
    for address in addresses:
        if _reach(address) not in allowed:
            raise ConfigError(
                f"The MCP server leads to {_origin(urlsplit(url))}, which points to {address}, "
                f"{_non_public_kind(address)}, further in than the server is."
            )
    return PinnedHost(urlsplit(url).hostname or "", str(addresses[0]))


async def _addresses(url: str) -> list[_Address]:
    parts = urlsplit(url)
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme.lower(), 443)
    except ValueError as exc:
        raise ConfigError(f"The URL {_origin(parts)} has an invalid port.") from exc
    return await _resolve(parts.hostname or "", port, _origin(parts))


def _reach(address: _Address) -> str:
    """How far in ``address`` is: public, private, loopback or link-local (IPv4 inside IPv6 judged as IPv4)."""
    for embedded in _embedded_ipv4(address):
        if (reach := _reach(embedded)) != "public":
            return reach
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    return "public" if _non_public_kind(address) is None else "private"


def _embedded_ipv4(address: _Address) -> list[ipaddress.IPv4Address]:
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    embedded = [address.ipv4_mapped, address.sixtofour, *(address.teredo or ())]
    if address in _NAT64:
        embedded.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return [ip for ip in embedded if ip is not None]


def origin_of(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port of ``url``, the port filled in, to compare origins; a malformed port compares equal to
    nothing else."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:
        return scheme, f"malformed {url}", None
    return scheme, (parts.hostname or "").lower(), port


def shown_url(url: str) -> str:
    """``url`` as messages show it: without the userinfo or the query, which may carry a token."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2], query="", fragment="").geturl()


def _origin(parts: SplitResult) -> str:
    """scheme://host:port, without userinfo, path or query."""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}"
