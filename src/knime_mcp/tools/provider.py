"""The MCP Tool Provider's behaviour: connect, list every tool, shape the list, and report what shaping left out.

The node, the CLI and Python users call :func:`list_server_tools`; it knows nothing of KNIME or Arrow.

    listing = await list_server_tools(ServerSpec(target="http://127.0.0.1:8000/mcp"), prefix="demo")
    listing.tools, listing.notes
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from knime_mcp.config import CredentialLookup, ServerSpec
from knime_mcp.mcp.session import server_client
from knime_mcp.mcp.sync import ProgressCallback
from knime_mcp.tools.names import ensure_unique, filter_tools, prefix_tools, sanitize_names
from knime_mcp.tools.policy import ToolPolicy, unannotated_note
from knime_mcp.tools.schema import SchemaMode, shape_schemas
from knime_mcp.tools.tool import MCPTool

__all__ = ["ToolListing", "list_server_tools", "shape_tools"]


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
