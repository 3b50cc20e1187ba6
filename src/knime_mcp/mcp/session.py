"""One session with a server a person chose in a node's or the CLI's settings, for nodes that talk to that server
directly (the Tool Provider, the Resource Reader, the Prompt node) rather than to the servers of a tools table.

Layer: just above :class:`~knime_mcp.mcp.client.McpClient`; an address that came from data is checked by the SSRF guard
first and the session pinned to the checked address.

    async with server_client(spec, untrusted_hint=None) as client:
        tools = await client.list_tools()
    async with HttpPool() as http, server_client(spec, http_pool=http) as client:  # several servers, one pool
        ...
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from knime_mcp.config import CredentialLookup, ServerSpec
from knime_mcp.mcp.client import DEFAULT_MAX_CONCURRENCY, McpClient
from knime_mcp.mcp.sync import ProgressCallback
from knime_mcp.net.http_pool import HttpPool
from knime_mcp.net.urlguard import check_server

__all__ = ["server_client"]


@asynccontextmanager
async def server_client(
    spec: ServerSpec,
    *,
    credentials: CredentialLookup | None = None,
    untrusted_hint: str | None = None,
    show_sign_in: Callable[[str], None] | None = None,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    progress: ProgressCallback | None = None,
    http_pool: HttpPool | None = None,
) -> AsyncIterator[McpClient]:
    """An open client for ``spec``. ``untrusted_hint``: the spec came from data (e.g. a flow variable), so it is
    checked before it is connected; the hint says how to trust it instead. ``progress`` hears that it connects.
    ``http_pool``: the HTTP connection pool of a run of several servers, which its creator closes; None: one of the
    client's own."""
    if progress is not None:
        progress(0.05, f"Connecting to {spec.display_name}")
    pin = await check_server(spec, hint=untrusted_hint) if untrusted_hint is not None else None
    client = McpClient(
        spec,
        credentials=credentials,
        pin=pin,
        show_sign_in=show_sign_in,
        max_concurrency=max_concurrency,
        http_pool=http_pool,
    )
    async with client:
        yield client
