"""Reading an MCP Registry's API: its ``servers`` list and search, paged with its cursor, and one server's version.

Layer: features (``registry``), over the run's HTTP pool (:mod:`knime_mcp.net.http_pool`: TLS settings, proxies),
with a timeout and a bound on every answer. The official registry serves the same API at ``/v0.1`` (stable) and
``/v0``; a registry that answers 404 at ``/v0.1`` is read at ``/v0`` (an older or an organisation's own registry).

    async with HttpPool() as pool:
        entries = await RegistryClient(pool).search("filesystem")
        entry = await RegistryClient(pool).get("io.github.user/weather", "1.0.2")
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, urlencode

import httpx2

from knime_mcp.config import DEFAULT_TLS, TlsSettings
from knime_mcp.errors import ConfigError, ServerConnectError, translate_errors
from knime_mcp.net.http_pool import HttpPool, read_bounded
from knime_mcp.net.urlguard import shown_url
from knime_mcp.registry.entries import OFFICIAL_REGISTRY, RegistryEntry, read_entry

__all__ = ["API_VERSIONS", "MAX_PAGES", "MAX_REGISTRY_BYTES", "OFFICIAL_REGISTRY", "RegistryClient"]

API_VERSIONS = ("v0.1", "v0")
"""The API paths tried, in order: the stable one first."""

MAX_REGISTRY_BYTES = 4 * 2**20
"""The largest answer read from a registry: a page of 100 entries is some 200 KB."""

MAX_PAGES = 10
"""The most pages one search reads, following the cursor."""

_PAGE_SIZE = 100
_TIMEOUT = 20.0
"""Seconds one request to a registry may take: an unreachable registry fails a search or setup, not hangs it."""


class RegistryClient:
    """One registry's read API through ``pool``; which API path it answers is learnt on the first request."""

    def __init__(self, pool: HttpPool, url: str = OFFICIAL_REGISTRY, *, tls: TlsSettings = DEFAULT_TLS) -> None:
        if not url.startswith(("https://", "http://")):
            raise ConfigError(
                f"The registry URL {url!r} is not an http(s) URL.", hint=f"The default is {OFFICIAL_REGISTRY}."
            )
        self.url = url.rstrip("/")
        self._pool = pool
        self._tls = tls
        self._version: str | None = None

    async def search(self, text: str = "", *, limit: int = 50) -> list[RegistryEntry]:
        """The latest version of each server whose name contains ``text`` (the registry's search), at most
        ``limit``, following ``metadata.nextCursor`` page by page."""
        entries: list[RegistryEntry] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            query = {"limit": str(min(_PAGE_SIZE, limit)), "version": "latest"}
            if text:
                query["search"] = text
            if cursor:
                query["cursor"] = cursor
            page = await self._get_json(f"servers?{urlencode(query)}")
            items = page.get("servers") if isinstance(page, dict) else None
            if not isinstance(items, list):
                raise ConfigError(f"The registry at {self.url} answered without a list of servers.")
            entries.extend(entry for item in items if (entry := _entry(item, self.url)) is not None)
            metadata = page.get("metadata") if isinstance(page.get("metadata"), dict) else {}
            cursor = metadata.get("nextCursor") or metadata.get("next_cursor")
            if len(entries) >= limit or not isinstance(cursor, str) or not cursor:
                break
        return entries[:limit]

    async def get(self, name: str, version: str) -> RegistryEntry | None:
        """The entry of ``name`` at ``version`` (``latest`` for the newest); None if the registry has no such one."""
        page = await self._get_json(f"servers/{quote(name, safe='')}/versions/{quote(version, safe='')}", missing=True)
        return None if page is None else read_entry(page, source=self.url)

    async def _get_json(self, path: str, *, missing: bool = False) -> Any:
        """The JSON at ``path`` under the API version the registry answers; None for a 404 when ``missing``."""
        versions = (self._version,) if self._version else API_VERSIONS
        for index, version in enumerate(versions):
            status, body = await self._fetch(f"{self.url}/{version}/{path}")
            if status == 404 and index < len(versions) - 1:
                continue  # an older registry: the next API path
            if status == 404 and missing:
                return None
            if status != 200:
                raise ServerConnectError(
                    f"The MCP Registry answered HTTP {status}.",
                    server=shown_url(self.url),
                    hint=f"Check the registry URL; the official one is {OFFICIAL_REGISTRY}.",
                )
            self._version = version
            try:
                return json.loads(body)
            except ValueError as exc:
                raise ConfigError(f"The registry at {self.url} answered with text that is not JSON.") from exc
        return None

    async def _fetch(self, url: str) -> tuple[int, bytes]:
        shown = shown_url(self.url)
        with translate_errors(shown):
            client = self._pool.client(timeout=httpx2.Timeout(_TIMEOUT), tls=self._tls, server=shown)
            async with client, client.stream("GET", url, headers={"Accept": "application/json"}) as response:
                if response.status_code != 200:
                    return response.status_code, b""
                return 200, await read_bounded(response, MAX_REGISTRY_BYTES, self._too_large)

    def _too_large(self) -> ConfigError:
        return ConfigError(
            f"The registry at {self.url} sent an answer larger than {MAX_REGISTRY_BYTES // 2**20} MB, the most "
            "knime-mcp reads from a registry.",
            hint="Check the registry URL.",
        )


def _entry(item: Any, source: str) -> RegistryEntry | None:
    """An item of a list as an entry; None for one without a name or a version (the registry's data, skipped)."""
    try:
        return read_entry(item, source=source)
    except ConfigError:
        return None
