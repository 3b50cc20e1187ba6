"""Fake server: lists a tool whose execution.taskSupport is "required" but does not declare the tasks capability,
a contradiction no real server is known to ship. Its ``tools/call`` would answer plainly (``research ran``), so a
client that sends the call is caught. From the SDK's low-level ``Server``; runs over stdio."""

from __future__ import annotations

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolExecution,
)

_TOOL = Tool(
    name="research",
    input_schema={"type": "object", "properties": {}},
    execution=ToolExecution(task_support="required"),
)


async def _list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
    return ListToolsResult(tools=[_TOOL])


async def _call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=f"{params.name} ran")])


async def _serve() -> None:
    server = Server("knime-mcp-fake-task-tool", on_list_tools=_list_tools, on_call_tool=_call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve)
