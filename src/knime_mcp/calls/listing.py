"""The tool providers' behaviour: list an MCP server's tools, or an OpenAPI document's or UTCP manual's and webhooks',
shape the list the same way for both, and report what shaping left out.

The MCP and HTTP Tool Provider nodes, the CLI and Python users call :func:`list_server_tools` and
:func:`list_http_tools`; one :func:`shape_tools` makes names unique across both kinds, and the selection settings
mean the same. :func:`list_servers_tools` lists several servers at once, each failing alone. It knows nothing of
KNIME or Arrow.

    listing = await list_server_tools(ServerSpec(target="http://127.0.0.1:8000/mcp"), prefix="demo")
    listing = await list_servers_tools({"github": github, "files": files})
    listing = await list_http_tools("https://api.example.com/openapi.json", prefix="shop")
    listing.tools, listing.notes, listing.failed
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup

from knime_mcp.config import DEFAULT_TIMEOUTS, DEFAULT_TLS, AuthRef, CredentialLookup, ServerSpec, Timeouts, TlsSettings
from knime_mcp.config.program import ProgramSpec
from knime_mcp.errors import ConfigError, McpToolError, ServerConnectError
from knime_mcp.http.descriptions import description_tools
from knime_mcp.http.discovery import discover_document
from knime_mcp.http.document import MAX_DOCUMENT_BYTES, ApiDescription, load_document
from knime_mcp.http.openapi import DocumentApiKey
from knime_mcp.http.webhooks import WebhookRow, webhook_tools
from knime_mcp.mcp.session import server_client
from knime_mcp.mcp.sync import ProgressCallback
from knime_mcp.net.http_pool import HttpPool
from knime_mcp.programs import program_tools
from knime_mcp.tools.names import ensure_unique, filter_tools, prefix_tools, sanitize_names
from knime_mcp.tools.policy import ToolPolicy, unannotated_note
from knime_mcp.tools.schema import SchemaMode, shape_schemas
from knime_mcp.tools.tags import tag_tools
from knime_mcp.tools.tool import MCPTool

__all__ = [
    "MAX_SERVERS_AT_ONCE", "ServerFailure", "ToolListing", "list_http_tools", "list_program_tools", "list_server_tools",
    "list_servers_tools", "shape_tools",
]  # fmt: skip

MAX_SERVERS_AT_ONCE = 32
"""How many servers :func:`list_servers_tools` connects to at once. A pasted configuration holds ten to thirty
servers in practice, and all of them then connect together (the listing takes as long as the slowest); the bound
keeps one of hundreds from starting hundreds of stdio processes and sockets at the same moment."""


@dataclass(frozen=True)
class ServerFailure:
    """A server a listing of several left out, and why: for the node warning and the CLI to name."""

    key: str
    """The server's key in the configuration, or its display name where it has none."""

    error: McpToolError
    """What failed, as listing that server alone raises it: its message says what to do."""

    @property
    def reason(self) -> str:
        """The error's message and hint, without the server's name, which :attr:`key` gives."""
        return self.error.message + (f" Hint: {self.error.hint}" if self.error.hint else "")

    def __str__(self) -> str:
        return f"{self.key}: {self.reason}"


@dataclass(frozen=True)
class ToolListing:
    tools: list[MCPTool]
    """The tools offered, in the server's order, with unique names."""

    notes: list[str]
    """Every tool left out and parameter dropped, for a node warning and the CLI."""

    failed: list[ServerFailure] = field(default_factory=list)
    """The servers of a listing of several that failed and were left out, in the servers' order."""


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


def list_program_tools(
    programs: Sequence[ProgramSpec],
    *,
    include: str | None = None,
    exclude: str | None = None,
    prefix: str = "",
    schema_mode: SchemaMode = "full",
    policy: ToolPolicy | None = None,
    tags: Sequence[str] = (),
) -> ToolListing:
    """The tools of a person's ``programs`` (:mod:`knime_mcp.programs`), sealed, each tagged with ``prefix`` and
    ``tags``, shaped as every listing is."""
    tools = tag_tools(program_tools(programs), (prefix, *tags))
    return shape_tools(tools, include=include, exclude=exclude, prefix=prefix, schema_mode=schema_mode, policy=policy)


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
    tags: Sequence[str] = (),
    http_pool: HttpPool | None = None,
) -> ToolListing:
    """Connect to one server, list all its tools (every page), and shape them for a table or a model, each tool
    given ``tags``; a tool that cannot be one (no name) is left out with a note, and the others are kept.

    ``untrusted_hint``: the spec came from data (e.g. a flow variable), so the SSRF guard checks it first and pins
    the session to the checked address; the hint says how to trust it instead. ``http_pool``: the HTTP connection
    pool of a listing of several servers, which its creator closes; None: one of its own.
    """
    async with server_client(
        spec,
        credentials=credentials,
        untrusted_hint=untrusted_hint,
        show_sign_in=show_sign_in,
        progress=progress,
        http_pool=http_pool,
    ) as client:
        if progress is not None:
            progress(0.5, "Listing tools")
        listed = await client.tool_listing()
    shaped = shape_tools(  # tagged first: a policy may select tools by tag
        tag_tools(listed.tools, tags), include=include, exclude=exclude, prefix=prefix, schema_mode=schema_mode,
        policy=policy,
    )  # fmt: skip
    listing = ToolListing(shaped.tools, [*listed.left_out, *shaped.notes])
    if progress is not None:
        progress(1.0, f"{len(listing.tools)} tools")
    return listing


async def list_servers_tools(
    servers: Mapping[str | None, ServerSpec] | Iterable[tuple[str | None, ServerSpec]],
    *,
    prefix: str = "",
    tags: Sequence[str] = (),
    server_tags: Mapping[str, Sequence[str]] | None = None,
    strict: bool = False,
    progress: ProgressCallback | None = None,
    servers_at_once: int = MAX_SERVERS_AT_ONCE,
    **options: Any,
) -> ToolListing:
    """The tools of several servers (e.g. a pasted configuration's) in one listing, in their order, each name
    prefixed by its server's key (``KEY_`` before ``prefix``; a None key adds nothing) so that names stay unique and
    say where a tool comes from. ``servers``: by key, or ``(key, spec)`` pairs where keys may repeat (None for
    servers named on a command line). ``options``: :func:`list_server_tools`'s keywords, the same for every server.
    Each tool is tagged with its server's key (else ``prefix``), the ``server_tags`` of that key (a configuration's
    ``"tags"``, :func:`~knime_mcp.config.pasted.pasted_tags`; by the server's name for a None key, as a configuration's
    server is named by its key) and ``tags``, a person's for every server.

    The servers are listed concurrently, ``servers_at_once`` at a time, so the listing takes about as long as the
    slowest, through one HTTP connection pool (a pool per server cost one TLS context per server, built one after the
    other: benchmark figure 11); ``progress`` hears the fraction of servers done. A server that fails is left out
    and named in :attr:`ToolListing.failed`; with ``strict`` the first failure cancels the rest and is raised, as it
    is whenever there is only one server. When every server fails, a :class:`ServerConnectError` names each with
    its reason."""
    entries = list(servers.items() if isinstance(servers, Mapping) else servers)
    if len(entries) == 1:  # one server: its progress and its failure are the listing's
        key, spec = entries[0]
        return await list_server_tools(
            spec, prefix=_key_prefix(key, prefix), tags=_tags(key, spec, prefix, tags, server_tags), progress=progress,
            **options,
        )  # fmt: skip
    listings: list[ToolListing | None] = [None] * len(entries)
    failures: list[ServerFailure | None] = [None] * len(entries)
    limiter = anyio.CapacityLimiter(servers_at_once)
    done = 0

    async def list_one(index: int, key: str | None, spec: ServerSpec, group: TaskGroup, http: HttpPool) -> None:
        nonlocal done
        async with limiter:
            try:
                listings[index] = await list_server_tools(
                    spec, prefix=_key_prefix(key, prefix), tags=_tags(key, spec, prefix, tags, server_tags),
                    http_pool=http, **options,
                )  # fmt: skip
            except McpToolError as error:
                failures[index] = ServerFailure(key or spec.display_name, error)
                if strict:
                    group.cancel_scope.cancel()  # the others' listings are of no use once this one fails the run
        done += 1
        if progress is not None:
            progress(done / len(entries), f"Listed {done} of {len(entries)} servers")

    if progress is not None:
        progress(0.0, f"Listing the tools of {len(entries)} servers")
    async with HttpPool() as http, anyio.create_task_group() as group:
        for index, (key, spec) in enumerate(entries):
            group.start_soon(list_one, index, key, spec, group, http)
    failed = [failure for failure in failures if failure is not None]
    if failed and (strict or len(failed) == len(entries)):
        raise failed[0].error if strict else _every_server_failed(failed)
    listed = [listing for listing in listings if listing is not None]
    return ToolListing(
        [tool for listing in listed for tool in listing.tools], [note for listing in listed for note in listing.notes],
        failed,
    )  # fmt: skip


def _key_prefix(key: str | None, prefix: str) -> str:
    return "_".join(part for part in (key, prefix) if part)


def _tags(
    key: str | None, spec: ServerSpec, prefix: str, tags: Sequence[str], server_tags: Mapping[str, Sequence[str]] | None
) -> tuple[str, ...]:
    """The tags of one server's tools in a listing: see :func:`list_servers_tools`."""
    given = (server_tags or {}).get(key if key is not None else spec.name or "", ())
    return (key or prefix, *given, *tags)


def _every_server_failed(failed: Sequence[ServerFailure]) -> ServerConnectError:
    """The error of a listing of several servers that all failed: an empty tools table is no success."""
    reasons = " | ".join(str(failure) for failure in failed)
    return ServerConnectError(f"None of the {len(failed)} servers listed its tools. {reasons}")


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
    tags: Sequence[str] = (),
    max_response_bytes: int | None = None,
) -> ToolListing:
    """The tools of the API description at ``source``, an OpenAPI document or a UTCP manual (a URL or file; None:
    the one found at ``base_url`` (:mod:`knime_mcp.http.discovery`), or webhooks only), then one per webhook row,
    each tagged with the name ``prefix`` and ``tags``.

    ``auth`` goes to the API only, never to a webhook (whose URL is data), and only at the document's own origin or
    ``base_url`` (:mod:`knime_mcp.http.origins`). ``untrusted_hint``: the source or base URL came from data (a flow
    variable), so the document is read only from a public URL and the API's server is not sealed (agent and caller
    nodes check it again); otherwise it is, as a person chose it, where it is the document's origin or the base URL.
    ``trust_webhooks`` seals the webhooks' servers too. ``max_document_bytes``: a larger document is refused.
    ``tls``: the API's TLS settings (the document is read under them too); ``credentials``: for a client key's
    passphrase; ``max_response_bytes``: the largest response each tool reads (None: the default)."""
    tools: list[MCPTool] = []
    notes: list[str] = []
    sealed = untrusted_hint is None
    if (source and source.strip()) or (base_url and base_url.strip()):
        document = await _api_document(
            source,
            base_url,
            timeout=timeouts.connect,
            untrusted_hint=untrusted_hint,
            max_bytes=max_document_bytes,
            tls=tls,
            credentials=credentials,
        )
        api, notes = description_tools(
            document, base_url=base_url, auth=auth, timeouts=timeouts, tls=tls,
            max_response_bytes=max_response_bytes, seal=sealed,
        )  # fmt: skip
        tools += api
    elif not webhooks:
        raise ConfigError(
            "Neither an OpenAPI document, a base URL to find one at, nor webhooks given.",
            hint="Enter an OpenAPI document's URL or file path, or the API's Base URL, or connect a table of webhooks.",
        )
    tools += webhook_tools(webhooks, timeouts=timeouts, sealed=trust_webhooks, max_response_bytes=max_response_bytes)
    tools = tag_tools(tools, (prefix, *tags))  # before shaping: a policy may select tools by tag
    shaped = shape_tools(tools, include=include, exclude=exclude, prefix=prefix, schema_mode=schema_mode, policy=policy)
    return ToolListing(shaped.tools, notes + shaped.notes)


async def _api_document(source: str | None, base_url: str | None, **reading: Any) -> ApiDescription:
    """The document at ``source``, or else the one found at ``base_url``: what an API's address alone offers is
    looked for in :mod:`knime_mcp.http.discovery`."""
    if source and source.strip():
        return await load_document(source, **reading)
    return await discover_document(base_url or "", **reading)
