"""Reading an API description: from an http(s) URL or a file, as JSON or YAML, an OpenAPI 3.0 or 3.1 document or a
UTCP manual (told apart by content, as utcp-http does: ``utcp_version`` and ``tools`` make a manual).

Layer: below :mod:`knime_mcp.http.openapi` and :mod:`knime_mcp.http.utcp_manual`, which turn the description into
tools; this module only fetches and parses. A URL that came from data (a flow variable) passes the SSRF guard first,
like a server address does.

    document = await load_document("https://petstore3.swagger.io/api/v3/openapi.json")
    document.data["openapi"], document.url
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knime_mcp.config import DEFAULT_TIMEOUTS, DEFAULT_TLS, CredentialLookup, TlsSettings
from knime_mcp.errors import ConfigError, ServerConnectError

if TYPE_CHECKING:
    from knime_mcp.net.http_pool import HttpPool
    from knime_mcp.net.urlguard import PinnedHost

__all__ = [
    "MAX_DOCUMENT_BYTES", "SWAGGER_HINT", "ApiDescription", "OpenApiDocument", "UtcpManual", "fetch_text",
    "is_utcp_manual", "load_document", "parse_document",
]  # fmt: skip

MAX_DOCUMENT_BYTES = 10 * 2**20
"""The largest document read by default, from a URL or a file: the largest public API descriptions are a few MB."""

SWAGGER_HINT = (
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


@dataclass(frozen=True)
class UtcpManual:
    """A parsed UTCP manual and where it came from (:mod:`knime_mcp.http.utcp_manual` makes its tools)."""

    data: dict[str, Any]

    url: str | None = None
    """The http(s) URL it was read from, against which relative tool URLs resolve; None for a file."""

    source: str = field(default="", compare=False)
    """How messages name it: its URL (without a query), or its file path quoted."""


def is_utcp_manual(data: object) -> bool:
    """Whether parsed JSON is a UTCP manual rather than an OpenAPI document, as utcp-http tells them apart."""
    return isinstance(data, dict) and "utcp_version" in data and "tools" in data


ApiDescription = OpenApiDocument | UtcpManual
"""What an API's description read from a URL or a file is: its tools come from either alike."""


def parse_document(text: str, source: str, url: str | None = None) -> ApiDescription:
    """The document in ``text`` (JSON, or YAML, which is a superset of it): a UTCP manual, or else an OpenAPI 3
    document; a Swagger 2.0 or other document is a ConfigError naming ``source``."""
    import yaml

    try:
        data = json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"The OpenAPI document {source} is neither JSON nor YAML ({_first_line(exc)}).") from exc
    except RecursionError as exc:
        raise ConfigError(
            f"The OpenAPI document {source} is nested too deeply to read.", hint="Check that it is an OpenAPI document."
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"The OpenAPI document {source} is not a JSON or YAML object.")
    if is_utcp_manual(data):
        from knime_mcp.net.urlguard import shown_url

        return UtcpManual(data, url, shown_url(url) if url else source)
    if "swagger" in data:
        raise ConfigError(
            f"The document {source} is Swagger {data['swagger']}, which is not supported; OpenAPI 3.0 and 3.1 are.",
            hint=SWAGGER_HINT,
        )
    version = str(data.get("openapi", ""))
    if not version.startswith(("3.0", "3.1")):
        what = f"OpenAPI {version}" if version else _NEITHER
        raise ConfigError(f"The document {source} is {what}; OpenAPI 3.0 and 3.1 are supported.")
    if not isinstance(data.get("paths") or {}, dict):
        raise ConfigError(f"The 'paths' of the OpenAPI document {source} is not an object.")
    return OpenApiDocument(data, url)


async def load_document(
    source: str,
    *,
    timeout: float = DEFAULT_TIMEOUTS.connect,
    untrusted_hint: str | None = None,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    tls: TlsSettings = DEFAULT_TLS,
    credentials: CredentialLookup | None = None,
) -> ApiDescription:
    """Read the document or manual at ``source``, an http(s) URL or a file path, of at most ``max_bytes``.
    ``untrusted_hint``: the source came from data, so only a public http(s) URL is read (checked and pinned by the
    SSRF guard), never a file. ``tls``: the API's TLS settings, a client key's passphrase read through
    ``credentials``."""
    source = source.strip()
    if not source:
        raise ConfigError("No OpenAPI document given.", hint="Enter the document's URL or file path.")
    if source.startswith(("http://", "https://")):
        text = await _fetch(source, timeout, untrusted_hint, max_bytes, (tls, credentials))
        return parse_document(text, source, source)
    if untrusted_hint is not None:
        raise ConfigError(
            "A document path taken from data was refused: it would read a file of this machine.", hint=untrusted_hint
        )
    path = Path(source.removeprefix("file://")).expanduser()
    try:
        with path.open("rb") as file:
            content = file.read(max_bytes + 1)  # not its size: a device or a pipe has none
    except OSError as exc:
        raise ConfigError(f"Cannot read the OpenAPI document {source!r}: {exc.strerror or exc}.") from exc
    if len(content) > max_bytes:
        raise _too_large(repr(source), max_bytes)
    return parse_document(content.decode("utf-8", errors="replace"), repr(source))


async def _fetch(
    url: str,
    timeout: float,
    untrusted_hint: str | None,
    max_bytes: int,
    tls: tuple[TlsSettings, CredentialLookup | None],
) -> str:
    from knime_mcp.net.http_pool import HttpPool
    from knime_mcp.net.urlguard import check_url, shown_url

    pin = None if untrusted_hint is None else await check_url(url, hint=untrusted_hint)
    async with HttpPool() as pool:
        status, text = await fetch_text(pool, url, pin=pin, timeout=timeout, max_bytes=max_bytes, tls=tls)
    if status != 200:
        raise ServerConnectError(
            f"The OpenAPI document could not be read: HTTP {status}.",
            server=shown_url(url),
            hint="Check the document's URL in a browser.",
        )
    return text


async def fetch_text(
    pool: HttpPool,
    url: str,
    *,
    pin: PinnedHost | None,
    timeout: float,
    max_bytes: int,
    tls: tuple[TlsSettings, CredentialLookup | None],
) -> tuple[int, str]:
    """The status of a GET of ``url`` through ``pool`` (to the ``pin``\ ned address of a URL from data, if set) and,
    for a 200, its text of at most ``max_bytes`` (a ConfigError past them); connection failures as
    :func:`~knime_mcp.errors.translate_errors` says them."""
    import httpx2

    from knime_mcp.errors import translate_errors
    from knime_mcp.net.http_pool import read_bounded, text_encoding
    from knime_mcp.net.urlguard import shown_url

    shown = shown_url(url)
    with translate_errors(shown):
        borrowed = pool.client(timeout=httpx2.Timeout(timeout), pin=pin, tls=tls[0], credentials=tls[1], server=shown)
        async with borrowed as client:
            accept = {"Accept": "application/json, application/yaml"}
            async with client.stream("GET", url, headers=accept) as response:
                if response.status_code != 200:
                    return response.status_code, ""
                content = await read_bounded(response, max_bytes, partial(_too_large, shown, max_bytes))
    return 200, content.decode(text_encoding(response), errors="replace")


_NEITHER = "neither an OpenAPI document (it has no 'openapi' field) nor a UTCP manual (no 'utcp_version' and 'tools')"


def _too_large(source: str, max_bytes: int) -> ConfigError:
    return ConfigError(
        f"The API description {source} is larger than {max_bytes / 2**20:g} MB, the most knime-mcp reads.",
        hint="Raise the largest document size (the HTTP Tool Provider's setting, --max-document-mb) if it is "
        "legitimately that large.",
    )


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
