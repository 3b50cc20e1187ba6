"""KNIME's own Tool value (``knime.types.tool.Tool`` with ToolType MCP) as plain fields, both ways.

KNIME's unified Tool type (its ``mcp-tools`` branch, not in a release yet) names an MCP tool by a server URL, the
tool's name, description and parameter schema, and the name of a KNIME credential; KNIME's agent calls the server by
that name (its reader takes the tool's name as the server's tool name). This module says what of an
:class:`~knime_mcp.tools.tool.MCPTool` such a value can carry, which tools it cannot and why (so the provider nodes
name them rather than drop them), and which MCPTool a KNIME Tool cell stands for. It knows no ``knime``: the nodes
build and read the cells (``nodes.knime_io.tools_table``).

A tool's MCP App does not travel in a KNIME Tool value: KNIME's Java side fixes the value's fields, and the one
place left, the parameter schema, is what KNIME's agent hands a model, whose provider may refuse a keyword it does not
know. An app-only tool gets no cell: KNIME's agent would offer it to a model.

A KNIME Tool cell is data, like an unsealed MCP Tool cell: its server is never sealed here, so agent and caller
nodes check it with the SSRF guard and send it no secret of this machine unless their *Trust every server in the
tools table* is on.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from knime_mcp.config import OAUTH_KINDS, AuthRef, ServerSpec
from knime_mcp.errors import ConfigError
from knime_mcp.tools.tool import MCPTool

__all__ = ["KNIME_TOOL_COLUMN", "KnimeToolFields", "knime_tool_cells", "mcp_tools_of_knime", "tool_from_knime"]

KNIME_TOOL_COLUMN = "KNIME Tool"
"""The providers' column of KNIME Tool values, beside the MCP Tool column, where KNIME has the type."""

_NAMED = 20
"""The most left-out tools a note names one by one; the rest are counted."""


@dataclass(frozen=True)
class KnimeToolFields:
    """What a KNIME Tool value of ToolType MCP holds (``Tool.create_mcp_tool``'s arguments, the tool's name also
    being the server's name for it)."""

    name: str
    description: str
    parameter_schema: dict[str, Any] = field(default_factory=dict)
    server_uri: str = ""
    credential_name: str | None = None


def _left_out(tool: MCPTool) -> str | None:
    """Why KNIME's Tool type cannot carry ``tool``, in words; None when it can."""
    server, auth = tool.server, tool.server.auth
    if tool.kind != "mcp":
        kind = "an HTTP" if tool.http is not None else "a program"
        return f"{kind} tool: KNIME's Tool type describes MCP servers only"
    if not server.is_url or server.transport == "stdio":
        return "a stdio server"
    if server.transport == "sse":
        return "SSE transport: KNIME's Tool type names a server by its URL only"
    if "${" in server.target:
        return "an environment reference in the server URL"
    if server.headers:
        return "extra HTTP headers"
    if auth.kind in OAUTH_KINDS:
        return "OAuth sign-in"
    if auth.kind not in ("none", "bearer"):
        return f"{auth.kind} authentication"
    if auth.kind == "bearer" and auth.credential is None:
        return "a token from an environment variable: KNIME's Tool type names a KNIME credential only"
    if tool.task_required:
        return "runs only as an MCP task"
    if tool.app_only:
        return "only its MCP App may call it: KNIME's agent would offer it to a model"
    return None


def knime_tool_cells(tools: Iterable[MCPTool]) -> tuple[list[KnimeToolFields | None], str | None]:
    """One KNIME Tool per tool (None: a missing cell, for a tool the type cannot carry), and a note naming the
    tools left out with the reason, or None when every tool has its cell.

    A bearer token's credential travels by name (KNIME's type knows no other scheme); the name prefix does not, as
    KNIME calls the server by the tool's name."""
    cells: list[KnimeToolFields | None] = []
    left_out: list[tuple[str, str]] = []
    for tool in tools:
        reason = _left_out(tool)
        if reason is not None:
            cells.append(None)
            left_out.append((tool.name, reason))
            continue
        credential = tool.server.auth.credential if tool.server.auth.kind == "bearer" else None
        cells.append(
            KnimeToolFields(
                name=tool.tool_name,
                description=tool.description or tool.title or "",
                parameter_schema=tool.parameter_schema,
                server_uri=tool.server.target,
                credential_name=credential,
            )
        )
    return cells, _note(left_out)


def _note(left_out: Sequence[tuple[str, str]]) -> str | None:
    if not left_out:
        return None
    named = "; ".join(f"{name!r} ({reason})" for name, reason in left_out[:_NAMED])
    more = f"; and {len(left_out) - _NAMED} more" if len(left_out) > _NAMED else ""
    count = f"{len(left_out)} tool{'s have' if len(left_out) > 1 else ' has'}"
    return f"{count} no KNIME Tool value (a missing cell in {KNIME_TOOL_COLUMN!r}): {named}{more}"


def tool_from_knime(cell: KnimeToolFields) -> MCPTool:
    """The MCP tool a KNIME Tool cell of ToolType MCP stands for: its server as data (unsealed), with the
    credential it names sent as a bearer token, and no annotations (KNIME's type has none)."""
    uri = cell.server_uri
    if not isinstance(uri, str) or not uri.startswith(("http://", "https://")):
        raise ConfigError(
            f"The KNIME Tool {cell.name!r} names the server {uri!r}, which is not an http(s) URL.",
            hint="A KNIME Tool of type MCP must name its server by an http(s) URL; check the tools table.",
        )
    auth = AuthRef(kind="bearer", credential=cell.credential_name) if cell.credential_name else AuthRef()
    server = ServerSpec(target=uri, auth=auth)
    schema = cell.parameter_schema or {}
    return MCPTool(
        name=cell.name, tool_name=cell.name, description=cell.description or "", input_schema=schema,
        parameter_schema=schema, server=server,
    )  # fmt: skip


def mcp_tools_of_knime(cells: Iterable[KnimeToolFields], listed: Iterable[MCPTool]) -> list[MCPTool]:
    """The MCP tools of KNIME Tool cells that the table's MCP Tool cells do not already give (the providers write
    both for each tool: the MCP Tool cell, sealed and with annotations, wins)."""
    known = {(tool.tool_name, tool.server.target) for tool in listed if tool.kind == "mcp"}
    return [tool_from_knime(cell) for cell in cells if (cell.name, cell.server_uri) not in known]
