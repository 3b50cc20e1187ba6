"""The HTTP Tool Provider's behaviour: an OpenAPI document's operations and webhook rows as one shaped tool list.

Layer: above :mod:`knime_mcp.http.openapi` and :mod:`knime_mcp.http.webhooks`; the node and the CLI call
:func:`list_http_tools`, which shapes the tools with the MCP provider's
:func:`~knime_mcp.tools.provider.shape_tools`, so names are unique across both kinds and the selection settings mean the
same. It knows nothing of KNIME or Arrow.

    listing = await list_http_tools("https://api.example.com/openapi.json", prefix="shop")
    listing.tools, listing.notes
"""

from __future__ import annotations

from collections.abc import Sequence

from knime_mcp.config import DEFAULT_TIMEOUTS, AuthRef, Timeouts
from knime_mcp.errors import ConfigError
from knime_mcp.http.document import MAX_DOCUMENT_BYTES, OpenApiDocument, load_document
from knime_mcp.http.openapi import DocumentApiKey, openapi_tools
from knime_mcp.http.origins import judge_servers
from knime_mcp.http.schemas import DocumentSchemas
from knime_mcp.http.webhooks import WebhookRow, webhook_tools
from knime_mcp.tools.policy import ToolPolicy
from knime_mcp.tools.provider import ToolListing, shape_tools
from knime_mcp.tools.schema import SchemaMode
from knime_mcp.tools.tool import MCPTool

__all__ = ["list_http_tools"]


async def list_http_tools(
    source: str | None,
    *,
    base_url: str | None = None,
    auth: AuthRef | DocumentApiKey | None = None,
    timeouts: Timeouts = DEFAULT_TIMEOUTS,
    webhooks: Sequence[WebhookRow] = (),
    trust_webhooks: bool = False,
    include: str | None = None,
    exclude: str | None = None,
    prefix: str = "",
    schema_mode: SchemaMode = "full",
    policy: ToolPolicy | None = None,
    untrusted_hint: str | None = None,
    max_document_bytes: int = MAX_DOCUMENT_BYTES,
) -> ToolListing:
    """The tools of the document at ``source`` (a URL or file; None: webhooks only), then one per webhook row.

    ``auth`` goes to the API only, never to a webhook (whose URL is data), and only at the document's own origin or
    ``base_url`` (:mod:`knime_mcp.http.origins`). ``untrusted_hint``: the source or base URL came from data (a flow
    variable), so the document is read only from a public URL and the API's server is not sealed (agent and caller
    nodes check it again); otherwise it is, as a person chose it, where it is the document's origin or the base URL.
    ``trust_webhooks`` seals the webhooks' servers too. ``max_document_bytes``: a larger document is refused."""
    tools: list[MCPTool] = []
    notes: list[str] = []
    sealed = untrusted_hint is None
    if source and source.strip():
        document = await load_document(
            source, timeout=timeouts.connect, untrusted_hint=untrusted_hint, max_bytes=max_document_bytes
        )
        if isinstance(auth, DocumentApiKey):
            auth = auth.for_document(document)
        api = openapi_tools(document, base_url=base_url, auth=auth, timeouts=timeouts)
        credential = auth is not None and auth.kind != "none"
        api, notes = judge_servers(api, document.url, base_url=base_url, credential=credential, seal=sealed)
        notes += [] if credential or not api else _credential_note(document)
        tools += api
    elif not webhooks:
        raise ConfigError(
            "Neither an OpenAPI document nor webhooks given.",
            hint="Enter an OpenAPI document's URL or file path, or connect a table of webhooks.",
        )
    tools += webhook_tools(webhooks, timeouts=timeouts, sealed=trust_webhooks)
    shaped = shape_tools(tools, include=include, exclude=exclude, prefix=prefix, schema_mode=schema_mode, policy=policy)
    return ToolListing(shaped.tools, notes + shaped.notes)


def _credential_note(document: OpenApiDocument) -> list[str]:
    """The note for a document whose every operation asks for a credential (a ``security`` requirement at its top,
    without an empty one that makes it optional) when none is set: the tools would call the API without one."""
    required = document.data.get("security")
    if not isinstance(required, list) or not required or not all(isinstance(each, dict) and each for each in required):
        return []
    schemes = (document.data.get("components") or {}).get("securitySchemes") or {}
    schemas = DocumentSchemas(document.data)
    named = []
    for name in dict.fromkeys(name for each in required for name in each):
        scheme = schemas.deref(schemes.get(name), f"security scheme {name}") if name in schemes else None
        kind = scheme.get("scheme") or scheme.get("type") if isinstance(scheme, dict) else None
        named.append(f"{name!r} ({kind})" if isinstance(kind, str) else repr(name))
    return [
        f"The document asks a credential of every operation ({', '.join(named)}), but no authentication is set, so "
        "the tools call the API without a credential; set the Authentication setting to send one"
    ]
