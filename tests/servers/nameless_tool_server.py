"""Test server: a tool list with a tool whose name is empty, among good ones, from the SDK's low-level `Server` (which
lists whatever `Tool` objects it is given).

Lists `echo` and, second, a tool named "" titled "Nameless". `grow` adds the tool `grown` to the list and sends
`notifications/tools/list_changed`; the server declares `tools.listChanged`, or with `--undeclared` does not (and
notifies all the same). Runs over stdio.
"""

from __future__ import annotations

import sys

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

_READS = ToolAnnotations(read_only_hint=True)
_EMPTY = {"type": "object", "properties": {}}
_TOOLS = [
    Tool(name="echo", description="Return the tool's name.", input_schema=_EMPTY, annotations=_READS),
    Tool(name="", title="Nameless", description="A tool without a name.", input_schema=_EMPTY, annotations=_READS),
    Tool(name="grow", description="Add the tool 'grown'.", input_schema=_EMPTY, annotations=_READS),
]


async def _list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
    return ListToolsResult(tools=_TOOLS)


async def _call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
    if params.name == "grow" and all(tool.name != "grown" for tool in _TOOLS):
        _TOOLS.append(Tool(name="grown", input_schema=_EMPTY, annotations=_READS))
        await ctx.session.send_tool_list_changed()
    return CallToolResult(content=[TextContent(type="text", text=f"{params.name} ran")])


async def _serve() -> None:
    server = Server("knime-mcp-nameless-test", on_list_tools=_list_tools, on_call_tool=_call_tool)
    declared = "--undeclared" not in sys.argv
    options = server.create_initialization_options(NotificationOptions(tools_changed=declared))
    async with stdio_server() as (read, write):
        await server.run(read, write, options)


if __name__ == "__main__":
    anyio.run(_serve)
