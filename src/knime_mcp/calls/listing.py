"""The tool providers' behaviour: list an MCP server's tools, or an OpenAPI document's and webhooks', shape the list
the same way for both, and report what shaping left out.

The MCP and HTTP Tool Provider nodes, the CLI and Python users call :func:`list_server_tools` and
:func:`list_http_tools`; one :func:`shape_tools` makes names unique across both kinds, and the selection settings
mean the same. It knows nothing of KNIME or Arrow.

    listing = await list_server_tools(ServerSpec(target="http://127.0.0.1:8000/mcp"), prefix="demo")
    listing = await list_http_tools("https://api.example.com/openapi.json", prefix="shop")
    listing.tools, listing.notes
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from knime_mcp.config import DEFAULT_TIMEOUTS, DEFAULT_TLS, AuthRef, CredentialLookup, ServerSpec, Timeouts, TlsSettings
from knime_mcp.errors import ConfigError
from knime_mcp.http.document import MAX_DOCUMENT_BYTES, load_document
from knime_mcp.http.openapi import DocumentApiKey, openapi_tools
from knime_mcp.http.origins import judge_servers, missing_credential_note
from knime_mcp.http.webhooks import WebhookRow, webhook_tools
from knime_mcp.mcp.session import server_client
from knime_mcp.mcp.sync import ProgressCallback
from knime_mcp.tools.names import ensure_unique, filter_tools, prefix_tools, sanitize_names
from knime_mcp.tools.policy import ToolPolicy, unannotated_note
from knime_mcp.tools.schema import SchemaMode, shape_schemas
from knime_mcp.tools.tool import MCPTool

__all__ = ["ToolListing", "list_http_tools", "list_server_tools", "list_servers_tools", "shape_tools"]


@dataclass(frozen=True)
class ToolListing:
    tools: list[MCPTool]
    """The tools offered, in the server's order, with unique names."""

    notes: list[str]
    """Every tool left out and parameter dropped, for a node warning and the CLI."""


def shape_tools(
    tools: list[MCPTool],
    *,
    include: str | None = None,
    exclude: str | None = None,
    prefix: str = "",
    schema_mode: SchemaMode = "full",
    policy: ToolPolicy | None = None,
) -> ToolListing:
    """Filter by name and policy, apply the schema mode, prefix, and make names model-safe and unique."""
    policy = policy or ToolPolicy(destructive="allow")
    allowed, blocked = policy.apply(filter_tools(tools, include, exclude))
    shaped = shape_schemas(allowed, schema_mode)
    named = ensure_unique(sanitize_names(prefix_tools(shaped.tools, prefix)))
    unannotated = policy.unannotated(named)
    notes = blocked + ([unannotated_note(unannotated)] if unannotated else []) + list(shaped.notes)
    notes += [f"{tool.name}: {note}" for tool in named for note in tool.notes]
    return ToolListing(named, notes)


async def list_server_tools(
    spec: ServerSpec,
    *,
    include: str | None = None,
    exclude: str | None = None,
    prefix: str = "",
    schema_mode: SchemaMode = "full",
    policy: ToolPolicy | None = None,
    credentials: CredentialLookup | None = None,
    progress: ProgressCallback | None = None,
    untrusted_hint: str | None = None,
    show_sign_in: Callable[[str], None] | None = None,
) -> ToolListing:
    """Connect to one server, list all its tools (every page), and shape them for a table or a model; a tool that
    cannot be one (no name) is left out with a note, and the others are kept.

    ``untrusted_hint``: the spec came from data (e.g. a flow variable), so the SSRF guard checks it first and pins
    the session to the checked address; the hint says how to trust it instead.
    """
    async with server_client(
        spec, credentials=credentials, untrusted_hint=untrusted_hint, show_sign_in=show_sign_in, progress=progress
    ) as client:
        if progress is not None:
            progress(0.5, "Listing tools")
        listed = await client.tool_listing()
    shaped = shape_tools(
        listed.tools, include=include, exclude=exclude, prefix=prefix, schema_mode=schema_mode, policy=policy
    )
    listing = ToolListing(shaped.tools, [*listed.left_out, *shaped.notes])
    if progress is not None:
        progress(1.0, f"{len(listing.tools)} tools")
    return listing


async def list_servers_tools(
    servers: Mapping[str | None, ServerSpec], *, prefix: str = "", **options: Any
) -> ToolListing:
    """The tools of several servers (e.g. a pasted configuration's) in one listing, in their order, each name
    prefixed by its server's key (``KEY_`` before ``prefix``; a None key adds nothing) so that names stay unique and
    say where a tool comes from. ``options``: :func:`list_server_tools`'s keywords, the same for every server."""
    tools: list[MCPTool] = []
    notes: list[str] = []
    for key, spec in servers.items():
        listing = await list_server_tools(spec, prefix="_".join(part for part in (key, prefix) if part), **options)
        tools += listing.tools
        notes += listing.notes
    return ToolListing(tools, notes)


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
    tls: TlsSettings = DEFAULT_TLS,
    credentials: CredentialLookup | None = None,
) -> ToolListing:
    """The tools of the document at ``source`` (a URL or file; None: webhooks only), then one per webhook row.

    ``auth`` goes to the API only, never to a webhook (whose URL is data), and only at the document's own origin or
    ``base_url`` (:mod:`knime_mcp.http.origins`). ``untrusted_hint``: the source or base URL came from data (a flow
    variable), so the document is read only from a public URL and the API's server is not sealed (agent and caller
    nodes check it again); otherwise it is, as a person chose it, where it is the document's origin or the base URL.
    ``trust_webhooks`` seals the webhooks' servers too. ``max_document_bytes``: a larger document is refused.
    ``tls``: the API's TLS settings (the document is read under them too); ``credentials``: for a client key's
    passphrase."""
    tools: list[MCPTool] = []
    notes: list[str] = []
    sealed = untrusted_hint is None
    if source and source.strip():
        document = await load_document(
            source,
            timeout=timeouts.connect,
            untrusted_hint=untrusted_hint,
            max_bytes=max_document_bytes,
            tls=tls,
            credentials=credentials,
        )
        if isinstance(auth, DocumentApiKey):
            auth = auth.for_document(document)
        api = openapi_tools(document, base_url=base_url, auth=auth, timeouts=timeouts, tls=tls)
        credential = auth is not None and auth.kind != "none"
        api, notes = judge_servers(api, document.url, base_url=base_url, credential=credential, seal=sealed)
        notes += [] if credential or not api else missing_credential_note(document)
        tools += api
    elif not webhooks:
        raise ConfigError(
            "Neither an OpenAPI document nor webhooks given.",
            hint="Enter an OpenAPI document's URL or file path, or connect a table of webhooks.",
        )
    tools += webhook_tools(webhooks, timeouts=timeouts, sealed=trust_webhooks)
    shaped = shape_tools(tools, include=include, exclude=exclude, prefix=prefix, schema_mode=schema_mode, policy=policy)
    return ToolListing(shaped.tools, notes + shaped.notes)
