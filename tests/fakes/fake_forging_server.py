"""Fake: a stdio MCP server (the SDK's `MCPServer`) whose log message, progress message and error each hold a line
feed followed by a line of their own (`Error: forged …`), to forge a line on the client's stderr.

- `forge` logs a warning, reports progress, then fails, each text with a forged line;
- `lines` returns text of several lines (which the CLI's JSON output keeps).
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

FORGED = "\nError: forged {} line"


def main() -> None:
    server = MCPServer("knime-mcp-forging-test")

    @server.tool()
    async def forge(ctx: Context) -> str:
        """Log, report progress and fail, each with a forged line."""
        await ctx.warning("disk almost full" + FORGED.format("log"))
        await ctx.report_progress(1, 2, "half way" + FORGED.format("progress"))
        raise ToolError("boom" + FORGED.format("error"))

    @server.tool()
    def lines() -> str:
        """Text of several lines."""
        return "one\ntwo" + FORGED.format("result")

    server.run("stdio")


if __name__ == "__main__":
    main()
