"""Test server: 25 tools, resources, resource templates and prompts each, listed 10 per page by the SDK's low-level
`Server`, so a client must follow cursors.

The cursor is the offset of the page's first item, as text. Each tool returns its own name. Runs over Streamable
HTTP on 127.0.0.1 and prints `paged test server listening on http://127.0.0.1:PORT/mcp`.
"""

from __future__ import annotations

from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    Prompt,
    Resource,
    ResourceTemplate,
    TextContent,
    Tool,
)

from knime_mcp.demo_server import HOST, serve_http

TOOL_COUNT = 25
PAGE_SIZE = 10

_TOOLS = [
    Tool(
        name=f"tool_{number:02d}",
        title=f"Tool {number}",
        description=f"Return this tool's name; tool {number + 1} of {TOOL_COUNT}.",
        input_schema={"type": "object", "properties": {}},
    )
    for number in range(TOOL_COUNT)
]
_TOOL_NAMES = {tool.name for tool in _TOOLS}
_RESOURCES = [Resource(name=f"resource_{number:02d}", uri=f"paged://resource/{number}") for number in range(TOOL_COUNT)]
_TEMPLATES = [
    ResourceTemplate(name=f"template_{number:02d}", uri_template=f"paged://template/{number}/{{id}}")
    for number in range(TOOL_COUNT)
]
_PROMPTS = [Prompt(name=f"prompt_{number:02d}") for number in range(TOOL_COUNT)]


def _page(params: PaginatedRequestParams | None) -> tuple[slice, str | None]:
    """Which items the page holds, and the cursor of the next one."""
    start = _page_start(params.cursor if params is not None else None)
    end = start + PAGE_SIZE
    return slice(start, end), str(end) if end < TOOL_COUNT else None


async def _list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
    items, cursor = _page(params)
    return ListToolsResult(tools=_TOOLS[items], next_cursor=cursor)


async def _list_resources(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListResourcesResult:
    items, cursor = _page(params)
    return ListResourcesResult(resources=_RESOURCES[items], next_cursor=cursor)


async def _list_templates(
    ctx: ServerRequestContext, params: PaginatedRequestParams | None
) -> ListResourceTemplatesResult:
    items, cursor = _page(params)
    return ListResourceTemplatesResult(resource_templates=_TEMPLATES[items], next_cursor=cursor)


async def _list_prompts(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListPromptsResult:
    items, cursor = _page(params)
    return ListPromptsResult(prompts=_PROMPTS[items], next_cursor=cursor)


def _page_start(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit() or int(cursor) >= TOOL_COUNT:
        raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor: {cursor!r}")
    return int(cursor)


async def _call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
    if params.name not in _TOOL_NAMES:
        return CallToolResult(content=[TextContent(type="text", text=f"Unknown tool: {params.name}")], is_error=True)
    return CallToolResult(content=[TextContent(type="text", text=params.name)])


def main() -> None:
    server = Server(
        "knime-mcp-paged-test",
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
        on_list_resources=_list_resources,
        on_list_resource_templates=_list_templates,
        on_list_prompts=_list_prompts,
    )
    serve_http(server.streamable_http_app(host=HOST), "/mcp", name="paged test server")


if __name__ == "__main__":
    main()
