"""Test server: a tool list that is answered only once ``--count`` servers of this kind are listing together, so a
test sees that a client lists several servers at once without timing anything.

On ``tools/list`` the server leaves a file named after its process in ``--folder`` (which the servers of one test
share) and waits until ``--count`` files are there, then lists its one tool, ``<name>_here``. After ``--wait``
seconds (:data:`WAIT_SECONDS`: generous, for a loaded machine; under the client's call timeout of 60 s) without
them, it answers with an error saying how many had arrived: a client that lists the servers one after another
fails. Runs over stdio.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

WAIT_SECONDS = 45


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--folder", required=True, help="the folder the servers listing together share")
    parser.add_argument("--count", type=int, required=True, help="how many servers must be listing at once")
    parser.add_argument("--name", required=True, help="the server's name: its tool is NAME_here")
    parser.add_argument("--wait", type=float, default=WAIT_SECONDS, help="seconds to wait for the others")
    return parser.parse_args()


async def _serve(arguments: argparse.Namespace) -> None:
    folder = Path(arguments.folder)
    tool = Tool(name=f"{arguments.name}_here", description="Say which server this is.", input_schema={"type": "object"})

    async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
        (folder / str(os.getpid())).touch()
        with anyio.move_on_after(arguments.wait):
            while len(list(folder.iterdir())) < arguments.count:
                await anyio.sleep(0.01)
            return ListToolsResult(tools=[tool])
        arrived = len(list(folder.iterdir()))
        raise MCPError(code=INTERNAL_ERROR, message=f"only {arrived} of {arguments.count} listings arrived together")

    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=arguments.name)])

    server = Server("knime-mcp-gathering-list-test", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve, _arguments())
