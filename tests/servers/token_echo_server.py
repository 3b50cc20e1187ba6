"""Test server: a tool that fails quoting the token it was given, over stdio, as careless servers do.

Each tool quotes ``API_TOKEN`` from its environment in another way: ``check_access`` in an error result,
``verify_token`` in a JSON-RPC error, ``whoami`` in a successful result's text and structured content, and so do the
resource ``token://whoami`` and the prompt ``whoami``; so a test can show that the value never reaches a table, a
log, an error or a model.
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, TextContent, ToolAnnotations


def build_server() -> MCPServer:
    server = MCPServer("knime-mcp-token-echo-test", log_level="WARNING")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def check_access(resource: str) -> CallToolResult:
        """Check access to a resource; always refused, quoting the token."""
        denied = f"access to {resource} denied for token {os.environ.get('API_TOKEN', '')}"
        return CallToolResult(content=[TextContent(text=denied)], is_error=True)

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def verify_token() -> str:
        """Verify the token; always rejected as a protocol error, quoting it."""
        raise MCPError(code=INVALID_PARAMS, message=f"token {os.environ.get('API_TOKEN', '')} is not valid here")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def whoami() -> dict[str, str]:
        """Who the token belongs to, quoting it."""
        return {"user": "knime", "token": os.environ.get("API_TOKEN", "")}

    @server.resource("token://whoami")
    def whoami_resource() -> str:
        """Who the token belongs to, quoting it."""
        return f"knime, with token {os.environ.get('API_TOKEN', '')}"

    @server.prompt()
    def whoami_prompt() -> str:
        """A prompt quoting the token."""
        return f"You act for the holder of token {os.environ.get('API_TOKEN', '')}."

    return server


if __name__ == "__main__":
    build_server().run("stdio")
