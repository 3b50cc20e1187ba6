"""Finding an API's OpenAPI document (or UTCP manual) from its base URL alone, at the paths where web frameworks
serve one and where UTCP providers serve their manual (``/utcp``, after the OpenAPI paths).

Given only where an API lives (the HTTP Tool Provider's *Base URL* with no *OpenAPI document*, ``knime-mcp
http-tools --base-url URL``), each of :data:`DOCUMENT_PATHS` is asked for, first under the base URL's path, then
at the root of its origin; the first OpenAPI 3 document or UTCP manual found is the API's. Everything stays at the
base URL's origin, so the credential rules of a document read from a URL hold unchanged
(:mod:`knime_mcp.http.origins`): the document's origin is the base URL's. A base URL from data passes the SSRF guard
once, and every request goes to the address it checked. Nothing found is a ConfigError listing each path tried and
what it answered.

Layer: beside :mod:`knime_mcp.http.document`, whose reading and parsing it uses, below
:mod:`knime_mcp.calls.listing`, which calls it when a base URL comes without a document.

    document = await discover_document("http://127.0.0.1:8000")
    document.url   # 'http://127.0.0.1:8000/openapi.json'
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from knime_mcp.config import DEFAULT_TIMEOUTS, DEFAULT_TLS, CredentialLookup, TlsSettings
from knime_mcp.errors import ConfigError
from knime_mcp.http.document import MAX_DOCUMENT_BYTES, SWAGGER_HINT, ApiDescription, fetch_text, parse_document

__all__ = ["DOCUMENT_PATHS", "discover_document"]

DOCUMENT_PATHS = (
    "openapi.json",  # FastAPI, Litestar, Flask-OpenAPI3, many hand-written APIs
    "openapi.yaml",
    "v3/api-docs",  # Spring Boot with springdoc-openapi
    "swagger/v1/swagger.json",  # ASP.NET Core with Swashbuckle
    "api-json",  # NestJS with @nestjs/swagger
    "api/schema/",  # Django REST framework with drf-spectacular
    "swagger.json",  # older tooling, often Swagger 2.0
    ".well-known/openapi.json",
    "utcp",  # a UTCP provider's manual, where utcp.io's implementation guide serves it
)
"""Where frameworks serve their OpenAPI document by default, relative to the API's root, most common first, then
where a UTCP provider serves its manual."""


async def discover_document(
    base_url: str,
    *,
    timeout: float = DEFAULT_TIMEOUTS.connect,
    untrusted_hint: str | None = None,
    max_bytes: int = MAX_DOCUMENT_BYTES,
    tls: TlsSettings = DEFAULT_TLS,
    credentials: CredentialLookup | None = None,
) -> ApiDescription:
    """The first OpenAPI 3 document or UTCP manual at :func:`candidate_urls` of ``base_url``, an http(s) URL.
    ``untrusted_hint``: the base URL came from data, so it must be public (checked and pinned by the SSRF guard). A
    server that cannot be reached fails at once; one that answers but serves no document is a ConfigError naming
    every path tried."""
    from knime_mcp.net.http_pool import HttpPool
    from knime_mcp.net.urlguard import check_url, shown_url

    base_url = base_url.strip()
    if not base_url.lower().startswith(("http://", "https://")):
        raise ConfigError(f"The base URL {base_url!r} is not an http(s) URL, so no OpenAPI document can be looked for.")
    pin = None if untrusted_hint is None else await check_url(base_url, hint=untrusted_hint)
    tried: dict[str, str] = {}
    async with HttpPool() as pool:
        for url in candidate_urls(base_url):
            path = urlsplit(url).path
            status, text = await fetch_text(
                pool, url, pin=pin, timeout=timeout, max_bytes=max_bytes, tls=(tls, credentials)
            )
            if status != 200:
                tried[path] = f"HTTP {status}"
                continue
            try:
                return parse_document(text, url, url)
            except ConfigError as exc:
                tried[path] = "Swagger 2.0, not supported" if exc.hint == SWAGGER_HINT else "no OpenAPI 3 or UTCP"
    swagger = "Swagger 2.0, not supported" in tried.values()
    raise ConfigError(
        f"No OpenAPI document was found at {shown_url(base_url)}, nor a UTCP manual; tried {_outcomes(tried)}.",
        hint=SWAGGER_HINT if swagger else "Give the URL or file path of the API's OpenAPI document (or UTCP manual).",
    )


def _outcomes(tried: dict[str, str]) -> str:
    """Each path tried with what it answered; one answer said once when all gave it."""
    if len(set(tried.values())) == 1:
        return f"{', '.join(tried)} (each: {next(iter(tried.values()))})"
    return ", ".join(f"{path} ({outcome})" for path, outcome in tried.items())


def candidate_urls(base_url: str) -> list[str]:
    """:data:`DOCUMENT_PATHS` under the base URL's path, then at its origin's root if that differs; without the base
    URL's query and fragment."""
    parts = urlsplit(base_url)
    roots = dict.fromkeys([parts.path.rstrip("/") + "/", "/"])
    return [urlunsplit((parts.scheme, parts.netloc, root + path, "", "")) for root in roots for path in DOCUMENT_PATHS]
