"""Reading an OpenAPI document: from an http(s) URL or a file, as JSON or YAML, OpenAPI 3.0 or 3.1 only.

Layer: below :mod:`knime_mcp.http.openapi`, which turns the document into tools; this module only fetches and
parses. A URL that came from data (a flow variable) passes the SSRF guard first, like a server address does.

    document = await load_document("https://petstore3.swagger.io/api/v3/openapi.json")
    document.data["openapi"], document.url
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from knime_mcp.config import DEFAULT_TIMEOUTS
from knime_mcp.errors import ConfigError, ServerConnectError

__all__ = ["OpenApiDocument", "load_document", "parse_document"]

_SWAGGER_HINT = (
    "Convert it to OpenAPI 3 first, e.g. with 'npx swagger2openapi swagger.json -o openapi.json', or with the "
    "converter of the API's own tooling."
)


@dataclass(frozen=True)
class OpenApiDocument:
    """A parsed OpenAPI 3.x document and where it came from."""

    data: dict[str, Any]

    url: str | None = None
    """The http(s) URL it was read from, against which relative server URLs resolve; None for a file."""

    @property
    def version(self) -> str:
        return str(self.data.get("openapi", ""))


def parse_document(text: str, source: str, url: str | None = None) -> OpenApiDocument:
    """The document in ``text`` (JSON, or YAML, which is a superset of it); a Swagger 2.0 or other non-OpenAPI-3
    document is a ConfigError naming ``source``."""
    import yaml

    try:
        data = json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"The OpenAPI document {source} is neither JSON nor YAML ({_first_line(exc)}).") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"The OpenAPI document {source} is not a JSON or YAML object.")
    if "swagger" in data:
        raise ConfigError(
            f"The document {source} is Swagger {data['swagger']}, which is not supported; OpenAPI 3.0 and 3.1 are.",
            hint=_SWAGGER_HINT,
        )
    version = str(data.get("openapi", ""))
    if not version.startswith(("3.0", "3.1")):
        what = f"OpenAPI {version}" if version else "not an OpenAPI document (it has no 'openapi' field)"
        raise ConfigError(f"The document {source} is {what}; OpenAPI 3.0 and 3.1 are supported.")
    if not isinstance(data.get("paths") or {}, dict):
        raise ConfigError(f"The 'paths' of the OpenAPI document {source} is not an object.")
    return OpenApiDocument(data, url)


async def load_document(
    source: str, *, timeout: float = DEFAULT_TIMEOUTS.connect, untrusted_hint: str | None = None
) -> OpenApiDocument:
    """Read the document at ``source``, an http(s) URL or a file path. ``untrusted_hint``: the source came from
    data, so only a public http(s) URL is read (checked and pinned by the SSRF guard), never a file."""
    source = source.strip()
    if not source:
        raise ConfigError("No OpenAPI document given.", hint="Enter the document's URL or file path.")
    if source.startswith(("http://", "https://")):
        return parse_document(await _fetch(source, timeout, untrusted_hint), source, source)
    if untrusted_hint is not None:
        raise ConfigError(
            "A document path taken from data was refused: it would read a file of this machine.", hint=untrusted_hint
        )
    path = Path(source.removeprefix("file://")).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Cannot read the OpenAPI document {source!r}: {exc.strerror or exc}.") from exc
    return parse_document(text, repr(source))


async def _fetch(url: str, timeout: float, untrusted_hint: str | None) -> str:
    import httpx2

    from knime_mcp.errors import translate_errors
    from knime_mcp.mcp.transports import HttpPool
    from knime_mcp.urlguard import check_url

    pin = None if untrusted_hint is None else await check_url(url, hint=untrusted_hint)
    shown = _without_userinfo(url)
    pool = HttpPool()
    try:
        with translate_errors(shown):
            async with pool.client(timeout=httpx2.Timeout(timeout), pin=pin) as client:
                response = await client.get(url, headers={"Accept": "application/json, application/yaml"})
    finally:
        await pool.aclose()
    if response.status_code != 200:
        raise ServerConnectError(
            f"The OpenAPI document could not be read: HTTP {response.status_code}.",
            server=shown,
            hint="Check the document's URL in a browser.",
        )
    return response.text


def _without_userinfo(url: str) -> str:
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
