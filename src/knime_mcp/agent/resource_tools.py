"""The agent's resource tools: the model lists and reads the resources of the MCP servers in the tools table.

Layer: core, beside :mod:`knime_mcp.agent.toolset`. :func:`resource_tools` makes two :class:`LocalTool` objects of kind
``resource``, which :func:`~knime_mcp.agent.loop.run_agent` offers next to the table's tools when
:attr:`AgentConfig.resources <knime_mcp.agent.loop.AgentConfig.resources>` is on. So they run through the same
dispatcher (argument validation, the tool-call log), their output is fenced and capped like any tool output, and their
failures (an unknown server or URI) go back to the model. They only read, and only from the servers of the table's MCP
tools, over the run's :class:`ClientPool`: the same sessions the tools use, with the same checks of servers from data.
The tool policy's allow-list and deny-list apply to their names.

    tools, warnings = resource_tools(table_servers(mcp_tools), pool, ToolPolicy())
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from knime_mcp.calls.dispatch import LocalTool
from knime_mcp.errors import McpToolError, ResourceError, ToolCallError
from knime_mcp.seal import is_sealed_here
from knime_mcp.tools.results import ContentPart, ImagePart, ResourcePart, TextPart, ToolResult
from knime_mcp.tools.tool import MCPTool

if TYPE_CHECKING:
    from knime_mcp.calls.pool import ClientPool
    from knime_mcp.config import ServerSpec
    from knime_mcp.mcp.client import McpClient
    from knime_mcp.mcp.resources import ResourceContent
    from knime_mcp.tools.policy import ToolPolicy

__all__ = ["LIST_RESOURCES", "READ_RESOURCE", "RESOURCE_KIND", "offered_under", "resource_tools", "table_servers"]

LIST_RESOURCES = "list_resources"
READ_RESOURCE = "read_resource"
RESOURCE_KIND = "resource"
"""The *Kind* of the resource tools' calls in the tool-call log."""

_LIST_HINT = f"Call {LIST_RESOURCES} to see the servers and the URIs they serve."


def table_servers(tools: Iterable[MCPTool | LocalTool]) -> dict[str, ServerSpec]:
    """The servers of the MCP tools (not HTTP tools' APIs, which serve no resources), by display name, in table order.

    Of the equal specs of one server, a sealed one is kept: a tool sealed here already reaches that server as it is,
    so reading its resources reaches nothing new; a server no tool sealed stays data, and the pool checks it as it
    checks it for the tools. Another server showing the same name is left out (the first keeps the name).
    """
    servers: dict[str, ServerSpec] = {}
    for tool in tools:
        if not isinstance(tool, MCPTool) or tool.kind != "mcp":
            continue
        known = servers.get(name := tool.server.display_name)
        if known is None or (known == tool.server and not is_sealed_here(known) and is_sealed_here(tool.server)):
            servers[name] = tool.server
    return servers


def resource_tools(
    servers: Mapping[str, ServerSpec], pool: ClientPool, policy: ToolPolicy
) -> tuple[list[LocalTool], list[str]]:
    """The resource tools the policy's lists let through, and one warning per tool they block; none without a
    server."""
    if not servers:
        return [], []
    access = _Resources(servers, pool)
    server = {
        "type": "string",
        "enum": list(servers),
        "description": "The MCP server, by its name in the list; may be left out when there is only one.",
    }
    tools = [
        LocalTool(
            name=LIST_RESOURCES,
            description="List the resources (documents, data, images) and resource templates of the MCP servers: "
            "each with its server, URI, name, description and MIME type. Read one with "
            f"{READ_RESOURCE}; a template's URI needs its {{variables}} filled in first.",
            input_schema={"type": "object", "properties": {"server": server}, "additionalProperties": False},
            run=access.list,
            kind=RESOURCE_KIND,
        ),
        LocalTool(
            name=READ_RESOURCE,
            description="Read one resource of an MCP server by its URI, as listed by "
            f"{LIST_RESOURCES}: text is returned as text, images as images; other binary contents are only "
            "described.",
            input_schema={
                "type": "object",
                "properties": {"server": server, "uri": {"type": "string", "description": "The resource's URI."}},
                "required": ["uri"],
                "additionalProperties": False,
            },
            run=access.read,
            kind=RESOURCE_KIND,
        ),
    ]
    return offered_under(policy, tools)


def offered_under(policy: ToolPolicy, tools: Sequence[LocalTool]) -> tuple[list[LocalTool], list[str]]:
    """The agent's own tools the policy's lists let through, and one warning per tool they block."""
    offered: list[LocalTool] = []
    warnings: list[str] = []
    for tool in tools:
        if (reason := policy.check_names(tool.name)) is None:
            offered.append(tool)
        else:
            warnings.append(f"Not offered to the model: {reason}")
    return offered, warnings


class _Resources:
    """What the two tools run: reads over the run's pooled sessions, one per server."""

    def __init__(self, servers: Mapping[str, ServerSpec], pool: ClientPool) -> None:
        self._servers = servers
        self._pool = pool

    async def list(self, arguments: dict[str, Any]) -> ToolResult:
        """One entry per server: its resources and templates, or why it has none; a server that cannot be reached
        is noted, and the others are listed still."""
        names = [arguments["server"]] if arguments.get("server") else list(self._servers)
        listed = []
        for name in names:
            try:
                listed.append(await self._listing(name))
            except McpToolError as exc:
                listed.append({"server": name, "error": str(exc)})
        return ToolResult(content=(TextPart(json.dumps(listed, ensure_ascii=False, indent=1)),))

    async def _listing(self, name: str) -> dict[str, Any]:
        client = await self._client(name)
        if not client.offers("resources"):
            return {"server": name, "note": "This server offers no resources (it declares no resources capability)."}
        resources = [_compact(resource.to_dict()) for resource in await client.list_resources()]
        templates = [_compact(template.to_dict()) for template in await client.list_resource_templates()]
        return {"server": name, "resources": resources, "resource_templates": templates}

    async def read(self, arguments: dict[str, Any]) -> ToolResult:
        name = arguments.get("server") or self._only_server()
        client = await self._client(name)
        if not client.offers("resources"):
            raise ResourceError(f"Server {name!r} offers no resources.", server=name, hint=_LIST_HINT)
        uri = arguments["uri"]
        parts = [_part(item) for item in await client.read_resource(uri)]
        return ToolResult(content=tuple(parts or [TextPart(f"[Resource <{uri}> is empty.]")]))

    def _only_server(self) -> str:
        if len(self._servers) == 1:
            return next(iter(self._servers))
        raise ToolCallError(
            f"Say which server to read from: one of {', '.join(map(repr, self._servers))}.", hint=_LIST_HINT
        )

    async def _client(self, name: str) -> McpClient:
        spec = self._servers.get(name)
        if spec is None:
            raise ToolCallError(f"No MCP server in the tools table is named {name!r}.", hint=_LIST_HINT)
        return await self._pool.client(spec)


def _compact(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry without its empty fields: every byte of a listing costs the model's context."""
    return {key: value for key, value in entry.items() if value not in (None, [], {})}


def _part(item: ResourceContent) -> ContentPart:
    """Text as text and images as images, which the agent shows the model as it shows tools' images; other binary
    contents as a line saying what they are."""
    mime_type = item.mime_type or ""
    if item.data is None:
        return ResourcePart(uri=item.uri, mime_type=item.mime_type, text=item.text or "")
    if mime_type.startswith("image/"):
        return ImagePart(data=base64.b64encode(item.data).decode("ascii"), mime_type=mime_type)
    return TextPart(
        f"[Binary contents of <{item.uri}> ({mime_type or 'unknown type'}, {len(item.data):,} bytes) not shown: "
        "only text and images reach the model.]"
    )
