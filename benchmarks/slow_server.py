"""A server that answers ``tools/list`` after 200 ms, for figure 11 (listing many servers at once).

Runs the SDK's low-level ``Server`` over Streamable HTTP on 127.0.0.1 with an ephemeral port and prints
`slow bench server listening on http://127.0.0.1:PORT/mcp`. Its five tools are named after its argument, so each
of the twenty servers of the figure lists tools of its own.

    python benchmarks/slow_server.py NAME
"""

from __future__ import annotations

import sys

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp_types import ListToolsResult, PaginatedRequestParams, Tool

from knime_mcp.demo_server import HOST, serve_http

LIST_SECONDS = 0.2
TOOL_COUNT = 5


def main(name: str) -> None:
    tools = [
        Tool(name=f"{name}_tool_{number}", description=f"Tool {number} of {name}.", input_schema={"type": "object"})
        for number in range(TOOL_COUNT)
    ]

    async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
        await anyio.sleep(LIST_SECONDS)
        return ListToolsResult(tools=tools)

    server = Server(f"knime-mcp-slow-bench-{name}", on_list_tools=list_tools)
    serve_http(server.streamable_http_app(host=HOST), "/mcp", name="slow bench server")


if __name__ == "__main__":
    main(sys.argv[1])
