"""Finding servers in the presets and an MCP Registry, and setting one up: what the CLI, the nodes and the Python
API call.

Layer: features (``registry``). A search lists the presets that match and the registry's servers, and still the
presets when the registry cannot be reached (saying why). A name without a slash is a preset's, one with a slash a
registry's (``io.github.user/server``). A remote a public registry lists must be at a public address
(:mod:`knime_mcp.net.urlguard`): a registry is data, and its entry must not point a person's client at this machine
or its network; a registry on this machine or a private network (an organisation's own) may list servers there.

    found = await search_servers("memory")
    setup = await resolve_server("io.github.user/weather", "1.0.2", {"WEATHER_API_KEY": "${WEATHER_API_KEY}"})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from knime_mcp.config import DEFAULT_TLS, TlsSettings
from knime_mcp.errors import ConfigError, McpToolError
from knime_mcp.net.http_pool import HttpPool
from knime_mcp.net.urlguard import check_url
from knime_mcp.registry.client import RegistryClient
from knime_mcp.registry.entries import OFFICIAL_REGISTRY, RegistryEntry
from knime_mcp.registry.presets import preset, presets
from knime_mcp.registry.setup import ServerSetup, server_setup

__all__ = ["SearchResult", "check_remote", "find_server", "resolve_server", "search_servers"]

_PRIVATE_REMOTE_HINT = (
    "A server listed by a public registry may only be at a public internet address; if you trust it, enter its URL "
    "as the server yourself."
)


@dataclass(frozen=True)
class SearchResult:
    """The presets that match, then the registry's servers; ``registry_error``: why the registry could not be read
    (offline, an error), None if it was."""

    entries: tuple[RegistryEntry, ...]
    registry_error: str | None = None


async def search_servers(
    text: str = "", *, registry_url: str = OFFICIAL_REGISTRY, limit: int = 50, tls: TlsSettings = DEFAULT_TLS
) -> SearchResult:
    """The presets whose name, title or description contains ``text``, and the latest version of each registry
    server whose name does (at most ``limit``)."""
    needle = text.casefold()
    matched = [e for e in presets() if needle in f"{e.name} {e.title} {e.description} {e.registry_name}".casefold()]
    try:
        async with HttpPool() as pool:
            listed = await RegistryClient(pool, registry_url, tls=tls).search(text, limit=limit)
    except McpToolError as exc:
        return SearchResult(tuple(matched), str(exc))
    return SearchResult((*matched, *listed))


async def find_server(
    name: str, version: str | None = None, *, registry_url: str = OFFICIAL_REGISTRY, tls: TlsSettings = DEFAULT_TLS
) -> RegistryEntry:
    """The preset called ``name`` (no slash), or the registry's entry of ``name`` at ``version`` (None: the
    latest); a ConfigError saying where it was looked for otherwise."""
    if "/" not in name:
        found = preset(name)
        if found is None:
            raise ConfigError(
                f"There is no preset {name!r}.",
                hint=f"The presets are {', '.join(e.name for e in presets())}; a registry server's name has a slash "
                "(io.github.user/server).",
            )
        if version is not None and version != found.version:
            raise ConfigError(
                f"The preset {name!r} is pinned to version {found.version}, not {version}.",
                hint="Leave the version out, or choose the server from the registry by its full name.",
            )
        return found
    async with HttpPool() as pool:
        entry = await RegistryClient(pool, registry_url, tls=tls).get(name, version or "latest")
    if entry is None:
        raise ConfigError(
            f"The registry at {registry_url} has no server {name!r}" + (f" at version {version}." if version else "."),
            hint="Search for it: knime-mcp servers search WORD.",
        )
    return entry


async def resolve_server(
    name: str,
    version: str | None = None,
    values: Mapping[str, str] | None = None,
    *,
    registry_url: str = OFFICIAL_REGISTRY,
    tls: TlsSettings = DEFAULT_TLS,
) -> ServerSetup:
    """The setup of the server ``name`` (see :func:`find_server`) with the person's input ``values``; a remote of a
    public registry at a private address is refused."""
    setup = server_setup(await find_server(name, version, registry_url=registry_url, tls=tls), values)
    await check_remote(setup)
    return setup


async def check_remote(setup: ServerSetup) -> None:
    """Refuse a remote at an address that is not public when a public registry listed it."""
    url = setup.config.get("url")
    if setup.entry.is_preset or not isinstance(url, str):
        return
    try:
        await check_url(setup.entry.source)
    except ConfigError:
        return  # a registry on this machine or a private network may list servers there
    await check_url(url, hint=_PRIVATE_REMOTE_HINT)
