"""Test server: a tool that fails quoting the token it was given, over stdio, as careless servers do.

`check_access` answers with an error result naming ``API_TOKEN`` from its environment, so a test can show that the
value never reaches a table, a log or a model.
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations


def build_server() -> MCPServer:
    server = MCPServer("knime-mcp-token-echo-test", log_level="WARNING")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def check_access(resource: str) -> CallToolResult:
        """Check access to a resource; always refused, quoting the token."""
        denied = f"access to {resource} denied for token {os.environ.get('API_TOKEN', '')}"
        return CallToolResult(content=[TextContent(text=denied)], is_error=True)

    return server


if __name__ == "__main__":
    build_server().run("stdio")
